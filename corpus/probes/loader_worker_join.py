"""An API server that starts its engine core in a child process and waits for it to report ready; the engine core reads
the checkpoint shards in a separate loader process (so the tokenizer and API server stay responsive) and receives the
tensors back over a multiprocessing queue before copying them to the GPU."""
import argparse, multiprocessing as mp, os, sys, time
import numpy as np
import common

log = common.log("api_server")


def loader_main(shards, q):
    import logging
    lg = common.log("weight_loader")
    rng = np.random.default_rng(0)
    for s in shards:
        t0 = time.time()
        tensors = {f"model.layers.{s * 4 + i}.mlp.{n}.weight": rng.standard_normal((4096, 1024), dtype=np.float32).astype(np.float16)
                   for i in range(4) for n in ("gate_proj", "up_proj", "down_proj")}
        lg.info("read shard model-%05d-of-%05d.safetensors: %d tensors, %.1f MiB in %.2fs", s + 1, len(shards), len(tensors),
                sum(t.nbytes for t in tensors.values()) / 2**20, time.time() - t0)
        q.put((s, tensors))
    q.put(None)
    lg.info("all %d shards read", len(shards))


def engine_core_main(model, num_shards, ready):
    import signal, torch

    def _shutdown(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, _shutdown)
    lg = common.log("engine_core")
    lg.info("EngineCore started (pid %d); device %s, %.1f GiB free", os.getpid(), torch.cuda.get_device_name(),
            torch.cuda.mem_get_info()[0] / 2**30)
    lg.info("Loading weights for %s from %d shards (loader processes: 1)", model, num_shards)
    q = mp.get_context("spawn").Queue()
    p = mp.get_context("spawn").Process(target=loader_main, args=(list(range(num_shards)), q), name="weight_loader",
                                          daemon=True)
    p.start()
    # wait for the loader to finish reading, then move everything to the GPU
    t0 = time.time()
    while p.is_alive():
        p.join(timeout=15)
        if p.is_alive():
            lg.info("waiting for weight loader (pid %d) ... %.0fs", p.pid, time.time() - t0)
    state = {}
    while (item := q.get()) is not None:
        state.update({k: torch.from_numpy(v).cuda() for k, v in item[1].items()})
    lg.info("Loaded %d tensors in %.1fs", len(state), time.time() - t0)
    ready.set()
    time.sleep(3600)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="Mistral-7B-Instruct-v0.3")
    ap.add_argument("--num-shards", type=int, default=3)
    ap.add_argument("--engine-ready-timeout", type=int, default=45)
    args = ap.parse_args()
    log.info("api_server args: %s", vars(args))
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    core = ctx.Process(target=engine_core_main, args=(args.model, args.num_shards, ready), name="EngineCore_0")
    core.start()
    t0 = time.time()
    while not ready.wait(timeout=15):
        log.info("Waiting for EngineCore_0 to become ready (%.0fs elapsed)", time.time() - t0)
        if time.time() - t0 > args.engine_ready_timeout:
            log.error("EngineCore_0 did not become ready within %d seconds; shutting down", args.engine_ready_timeout)
            for c in mp.active_children():
                c.terminate()
            core.join(5)
            raise TimeoutError(f"Timed out waiting for engine core processes to start ({args.engine_ready_timeout}s)")
    log.info("Application startup complete.")
