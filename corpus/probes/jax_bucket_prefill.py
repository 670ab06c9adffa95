"""A JAX serving engine (decoder-only, bf16) that jit-compiles prefill per prompt-length bucket: the prompt is padded to
the next bucket and the bucket's executable is compiled on first use. Attention is the plain softmax(QK^T)V of the
reference implementation; max_prompt_len comes from the model card (32k)."""
import argparse, functools, math, time

import jax
import jax.numpy as jnp

import common

log = common.log("jaxserve")


def init_params(key, layers, d, ff, vocab):
    ks = jax.random.split(key, 2 + 7 * layers)
    s = 0.02
    p = {"embed": (jax.random.normal(ks[0], (vocab, d)) * s).astype(jnp.bfloat16), "layers": []}
    for i in range(layers):
        k = ks[2 + 7 * i: 9 + 7 * i]
        p["layers"].append({n: (jax.random.normal(k[j], shp) * s).astype(jnp.bfloat16) for j, (n, shp) in enumerate(
            [("wq", (d, d)), ("wk", (d, d)), ("wv", (d, d)), ("wo", (d, d)), ("w1", (d, ff)), ("w3", (d, ff)),
             ("w2", (ff, d))])})
    return p


def rms(x):
    return x * jax.lax.rsqrt(jnp.mean(x.astype(jnp.float32) ** 2, -1, keepdims=True) + 1e-5).astype(x.dtype)


@functools.partial(jax.jit, static_argnames=("heads",))
def prefill(params, tokens, length, heads):
    x = params["embed"][tokens]
    S, d = x.shape
    hd = d // heads
    mask = jnp.tril(jnp.ones((S, S), dtype=bool)) & (jnp.arange(S)[None, :] < length)
    for lp in params["layers"]:
        h = rms(x)
        q = (h @ lp["wq"]).reshape(S, heads, hd).transpose(1, 0, 2)
        k = (h @ lp["wk"]).reshape(S, heads, hd).transpose(1, 0, 2)
        v = (h @ lp["wv"]).reshape(S, heads, hd).transpose(1, 0, 2)
        scores = jnp.einsum("hqd,hkd->hqk", q, k, preferred_element_type=jnp.float32) / math.sqrt(hd)
        scores = jnp.where(mask[None], scores, -1e30)
        att = jax.nn.softmax(scores, axis=-1).astype(jnp.bfloat16)
        o = jnp.einsum("hqk,hkd->hqd", att, v).transpose(1, 0, 2).reshape(S, d)
        x = x + o @ lp["wo"]
        h = rms(x)
        x = x + (jax.nn.silu(h @ lp["w1"]) * (h @ lp["w3"])) @ lp["w2"]
    logits = rms(x[length - 1]) @ params["embed"].T
    return jnp.argmax(logits)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="llama-style-7b")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--max-prompt-len", type=int, default=32768)
    args = ap.parse_args()
    d, ff, heads, vocab = 4096, 11008, 32, 32000
    buckets = [b for b in (128, 512, 2048, 8192, 32768) if b <= args.max_prompt_len]
    log.info("jax %s, backend %s, devices %s", jax.__version__, jax.default_backend(), jax.devices())
    log.info("model %s: d_model=%d heads=%d ffn=%d vocab=%d (%d layers loaded for this replica), bf16", args.model, d,
             heads, ff, vocab, args.layers)
    log.info("prefill buckets: %s (max_prompt_len=%d)", buckets, args.max_prompt_len)
    params = init_params(jax.random.PRNGKey(0), args.layers, d, ff, vocab)
    jax.block_until_ready(params)
    log.info("weights ready")
    for b in buckets[:3]:
        t0 = time.time()
        tok = prefill(params, jnp.zeros((b,), jnp.int32), b, heads)
        jax.block_until_ready(tok)
        log.info("warm-up: compiled and ran prefill bucket %d in %.1fs", b, time.time() - t0)
    log.info("engine ready; serving")
    requests = [("req-0", 412), ("req-1", 1530), ("req-2", 29911)]
    for rid, n in requests:
        b = next(x for x in buckets if x >= n)
        log.info("%s: prompt %d tokens -> bucket %d", rid, n, b)
        t0 = time.time()
        tokens = jnp.arange(b, dtype=jnp.int32) % vocab
        tok = prefill(params, tokens, n, heads)
        log.info("%s: first token %d (%.2fs)", rid, int(tok), time.time() - t0)


if __name__ == "__main__":
    main()
