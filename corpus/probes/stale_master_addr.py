"""A tensor-parallel engine that spawns one worker per rank on this node; the workers join the process group through
the env:// rendezvous (MASTER_ADDR / MASTER_PORT from the job's environment, as the pod template exports them)."""
import argparse, datetime, os, time
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import common


def worker(rank, world, timeout):
    log = common.log(f"worker[rank={rank}]")
    log.info("Worker started: pid=%d, rank=%d, world_size=%d, MASTER_ADDR=%s, MASTER_PORT=%s", os.getpid(), rank,
             world, os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT"))
    log.info("init_process_group(backend='nccl', init_method='env://', timeout=%ds)", timeout)
    t0 = time.time()
    dist.init_process_group("nccl", init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout))
    log.info("process group ready in %.1fs", time.time() - t0)
    torch.cuda.set_device(rank % torch.cuda.device_count())
    t = torch.ones(1, device="cuda") * (rank + 1)
    dist.all_reduce(t)
    log.info("all_reduce warm-up: %s", t.item())


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="Qwen2.5-32B-Instruct")
    ap.add_argument("--tensor-parallel-size", type=int, default=2)
    ap.add_argument("--dist-timeout", type=int, default=20)
    args = ap.parse_args()
    log = common.log("engine")
    log.info("Initializing engine: model=%s tensor_parallel_size=%d distributed_executor_backend=mp", args.model,
             args.tensor_parallel_size)
    log.info("torch %s, NCCL %s, %d visible GPU(s)", torch.__version__, ".".join(map(str, torch.cuda.nccl.version())),
             torch.cuda.device_count())
    log.info("Spawning %d worker processes", args.tensor_parallel_size)
    mp.spawn(worker, args=(args.tensor_parallel_size, args.dist_timeout), nprocs=args.tensor_parallel_size, join=True)
    log.info("workers ready")
