"""A torch serving engine's worker start-up (vLLM-style init_device: pick the device, make a first allocation, snapshot
free memory) before it loads weights. The launch script exports PYTORCH_CUDA_ALLOC_CONF for the worker."""
import argparse, os, time
import torch
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Qwen2.5-14B-Instruct")
ap.add_argument("--gpu-memory-utilization", type=float, default=0.9)
ap.add_argument("--max-model-len", type=int, default=32768)
args = ap.parse_args()
log = common.log("engine")
wlog = common.log("worker")
log.info("Initializing engine (v0.9.2) with config: model=%r, dtype=torch.bfloat16, max_seq_len=%d, "
         "tensor_parallel_size=1, gpu_memory_utilization=%.2f, enforce_eager=False, seed=0", args.model,
         args.max_model_len, args.gpu_memory_utilization)
for k in ("CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF", "NCCL_DEBUG", "OMP_NUM_THREADS"):
    if k in os.environ:
        log.info("env %s=%s", k, os.environ[k])


def init_device():
    torch.cuda.set_device(0)
    free, total = torch.cuda.mem_get_info()
    wlog.info("device cuda:0 %s, %.2f GiB free of %.2f GiB", torch.cuda.get_device_name(0), free / 2**30, total / 2**30)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    _ = torch.zeros(1, device="cuda")          # first allocation: creates the caching allocator's state
    torch.cuda.synchronize()
    return torch.cuda.mem_get_info()[0]


t0 = time.time()
free = init_device()
wlog.info("init_device done in %.2fs, %.2f GiB free", time.time() - t0, free / 2**30)
wlog.info("Starting to load model %s...", args.model)
w = torch.empty(int(2 * 2**30), dtype=torch.uint8, device="cuda")
wlog.info("Loading weights took %.2f seconds", time.time() - t0)
