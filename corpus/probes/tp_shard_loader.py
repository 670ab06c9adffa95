"""Tensor-parallel worker of a small serving engine, started by torchrun (one process per rank). Each rank reads its
share of the checkpoint's safetensors files (round-robin by file) into host memory, reports load progress through
the CPU (gloo) group after every file, then waits at a barrier until every rank has its weights before building the
CUDA side (NCCL group, KV cache)."""
import argparse, datetime, json, os, time

import torch
import torch.distributed as dist
from safetensors.torch import load_file

import common


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--tensor-parallel-size", type=int, default=2)
    args = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    log = common.log(f"worker[rank={rank}]")
    log.info("worker started: pid=%d rank=%d world_size=%d local_rank=%s", os.getpid(), rank, world,
             os.environ.get("LOCAL_RANK"))
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    log.info("CPU process group ready (backend=gloo, timeout=1800s)")

    with open(os.path.join(args.model, "model.safetensors.index.json")) as f:
        index = json.load(f)
    files = sorted(set(index["weight_map"].values()))
    mine = files[rank::world]
    log.info("checkpoint %s: %d files, %d tensors; this rank reads %d file(s): %s", os.path.basename(args.model),
             len(files), len(index["weight_map"]), len(mine), ", ".join(mine))
    total_bytes = torch.zeros(1, dtype=torch.int64)
    state = {}
    for i, name in enumerate(mine):
        t0 = time.time()
        part = load_file(os.path.join(args.model, name))
        nbytes = sum(t.numel() * t.element_size() for t in part.values())
        state.update(part)
        log.info("loaded %s (%d tensors, %.1f MiB) in %.2fs", name, len(part), nbytes / 2**20, time.time() - t0)
        # progress across ranks, for the loading bar on rank 0
        step = torch.tensor([nbytes], dtype=torch.int64)
        dist.all_reduce(step)
        total_bytes += step
        if rank == 0:
            log.info("load progress: %.1f MiB of %.1f MiB", total_bytes.item() / 2**20,
                     index["metadata"]["total_size"] / 2**20)
    log.info("all %d local file(s) loaded (%d tensors); waiting for the other ranks", len(mine), len(state))
    dist.barrier()
    log.info("all ranks loaded; initializing NCCL group and KV cache")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
