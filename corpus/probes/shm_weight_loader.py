"""Engine with a pool of CPU loader processes: each weight is read on the host, placed in shared memory so the worker
processes can pick it up without a copy, then moved to the GPU."""
import os, time, torch, torch.multiprocessing as mp, common
log = common.log("model_loader")


def worker(rank, q, done):
    while True:
        item = q.get()
        if item is None:
            break
        name, t = item
        done.put((name, float(t.float().abs().mean())))


if __name__ == "__main__":
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    log.info("torch %s on %s; tensor sharing strategy: %s", torch.__version__, torch.cuda.get_device_name() if dev == "cuda" else "cpu",
             mp.get_sharing_strategy())
    layers, hidden, inter = 16, 1024, 2816
    log.info("Loading model: llama-400m-chat layers=%d hidden=%d intermediate=%d dtype=bfloat16, %d loader workers",
             layers, hidden, inter, 2)
    ctx = mp.get_context("spawn")
    q, done = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, q, done), daemon=True) for r in range(2)]
    for p in procs:
        p.start()
    params, t0, n = {}, time.time(), 0
    for i in range(layers):
        for name, shape in [("self_attn.qkv_proj", (3 * hidden, hidden)), ("self_attn.o_proj", (hidden, hidden)),
                            ("mlp.gate_up_proj", (2 * inter, hidden)), ("mlp.down_proj", (hidden, inter))]:
            key = f"model.layers.{i}.{name}.weight"
            w = torch.empty(shape, dtype=torch.bfloat16).normal_(0, 0.02)
            w.share_memory_()
            q.put((key, w))
            params[key] = w.to(dev, non_blocking=True)
            n += 1
        log.info("Loading safetensors checkpoint shards: layer %d/%d (%.0f MiB on GPU)", i + 1, layers,
                 sum(p.numel() * 2 for p in params.values()) / 2**20)
    for _ in procs:
        q.put(None)
    for _ in range(n):
        done.get()
    log.info("Loading weights took %.2f seconds", time.time() - t0)
