"""A launcher that checks the GPUs in the parent process, then starts one model worker process per GPU."""
import argparse, multiprocessing as mp, os, sys, time, torch, common
log = common.log("launcher")


def worker(rank, model):
    wlog = common.log(f"worker{rank}")
    wlog.info("worker %d (pid %d) starting, model=%s", rank, os.getpid(), model)
    torch.cuda.set_device(rank)
    w = torch.empty(4096, 4096, device="cuda", dtype=torch.bfloat16)
    wlog.info("worker %d ready, %.2f GiB allocated", rank, torch.cuda.memory_allocated() / 2**30)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="llama-3.1-8b-instruct")
    ap.add_argument("--num-workers", type=int, default=1)
    args = ap.parse_args()
    log.info("python %s, torch %s", sys.version.split()[0], torch.__version__)
    n = torch.cuda.device_count()
    free, total = torch.cuda.mem_get_info(0)
    log.info("found %d GPU(s): %s, free %.1f / %.1f GiB", n, torch.cuda.get_device_name(0), free / 2**30, total / 2**30)
    procs = []
    for r in range(args.num_workers):
        p = mp.Process(target=worker, args=(r, args.model))
        p.start()
        procs.append(p)
        log.info("started worker %d pid=%d", r, p.pid)
    for r, p in enumerate(procs):
        p.join()
        if p.exitcode != 0:
            log.error("worker %d exited with code %d", r, p.exitcode)
            sys.exit(1)
    log.info("all workers ready")
