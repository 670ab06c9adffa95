"""A JAX inference replica: initialises the GPU backend, builds a small decoder, allocates its KV cache, serves requests."""
import argparse, logging, os, sys, time
import common
ap = argparse.ArgumentParser()
ap.add_argument("--replica", type=int, default=0)
ap.add_argument("--kv-cache-gib", type=float, default=40.0)
ap.add_argument("--ready-file", default="")
ap.add_argument("--serve-seconds", type=float, default=0)
args = ap.parse_args()
log = common.log(f"replica{args.replica}")
import jax, jax.numpy as jnp
log.info("jax %s, XLA_PYTHON_CLIENT_PREALLOCATE=%s XLA_PYTHON_CLIENT_MEM_FRACTION=%s", jax.__version__,
         os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE"), os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION"))
log.info("initialising backend")
devs = jax.devices()
log.info("devices: %s", devs)
d = devs[0]
stats = d.memory_stats() or {}
log.info("device memory pool: bytes_limit=%.2f GiB in_use=%.2f GiB", stats.get("bytes_limit", 0) / 2**30,
         stats.get("bytes_in_use", 0) / 2**30)
layers, hidden, vocab = 8, 2048, 32000
key = jax.random.PRNGKey(args.replica)
params = [jax.random.normal(jax.random.fold_in(key, i), (hidden, hidden), jnp.bfloat16) * 0.02 for i in range(layers)]
emb = jax.random.normal(key, (vocab, hidden), jnp.bfloat16)
log.info("weights loaded: %d layers, %.2f GiB", layers, (layers * hidden * hidden + vocab * hidden) * 2 / 2**30)
tokens_per_gib = 2**30 // (2 * layers * hidden * 2)
log.info("allocating KV cache: %.1f GiB (%d tokens)", args.kv_cache_gib, int(args.kv_cache_gib * tokens_per_gib))
kv = jnp.zeros((int(args.kv_cache_gib * 2**30 // 2),), jnp.bfloat16)
kv.block_until_ready()
stats = d.memory_stats() or {}
log.info("KV cache ready; device memory in use %.2f GiB", stats.get("bytes_in_use", 0) / 2**30)


@jax.jit
def forward(x):
    for w in params:
        x = x + jnp.tanh(x @ w)
    return x @ emb.T


x = emb[jnp.arange(256) % vocab]
forward(x).block_until_ready()
log.info("warm-up done; serving")
if args.ready_file:
    open(args.ready_file, "w").close()
t0 = time.time()
n = 0
while time.time() - t0 < args.serve_seconds:
    forward(x).block_until_ready()
    n += 1
    time.sleep(0.05)
log.info("served %d batches", n)
