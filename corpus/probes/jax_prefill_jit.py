"""A JAX inference engine: jitted prefill and decode steps, compiled by warm-up requests before serving."""
import argparse, time, functools, jax, jax.numpy as jnp, common
log = common.log("jax_engine")

ap = argparse.ArgumentParser()
ap.add_argument("--max-seq-len", type=int, default=2048)
args = ap.parse_args()
V, D, H, L = 32000, 512, 8, 2
log.info("jax %s devices %s", jax.__version__, jax.devices())
key = jax.random.PRNGKey(0)
ks = jax.random.split(key, 2 + 4 * L)
params = {"emb": jax.random.normal(ks[0], (V, D), jnp.bfloat16) * 0.02,
          "layers": [{n: jax.random.normal(ks[2 + 4 * i + j], (D, D), jnp.bfloat16) * 0.02
                      for j, n in enumerate(("wq", "wk", "wv", "wo"))} for i in range(L)]}
log.info("params initialised: %d tensors", len(jax.tree_util.tree_leaves(params)))


def rope(x, positions):
    d = x.shape[-1] // 2
    inv = 1.0 / (10000 ** (jnp.arange(d) / d))
    ang = positions[:, None] * inv[None, :]
    x1, x2 = x[..., :d], x[..., d:]
    c, s = jnp.cos(ang)[:, None, :], jnp.sin(ang)[:, None, :]
    return jnp.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1).astype(x.dtype)


@jax.jit
def prefill(params, tokens, seq_len):
    # tokens: [max_seq_len] padded; seq_len: number of real tokens
    positions = jnp.arange(seq_len)
    x = params["emb"][tokens[:seq_len]]
    for lp in params["layers"]:
        q = rope((x @ lp["wq"]).reshape(-1, H, D // H), positions)
        k = rope((x @ lp["wk"]).reshape(-1, H, D // H), positions)
        v = (x @ lp["wv"]).reshape(-1, H, D // H)
        att = jnp.einsum("qhd,khd->hqk", q, k) / (D // H) ** 0.5
        att = jnp.where(jnp.tril(jnp.ones((att.shape[-1], att.shape[-1]), bool)), att, -1e9)
        x = x + (jnp.einsum("hqk,khd->qhd", jax.nn.softmax(att, -1), v).reshape(-1, D) @ lp["wo"])
    return x[-1] @ params["emb"].T


log.info("warm-up: compiling prefill for max_seq_len=%d", args.max_seq_len)
t0 = time.time()
toks = jnp.zeros((args.max_seq_len,), jnp.int32)
logits = prefill(params, toks, 16)
logits.block_until_ready()
log.info("warm-up done in %.1f s", time.time() - t0)
