"""An engine that sizes a GPU KV cache and, for preempted sequences, a CPU swap space of --swap-space GiB per GPU, allocated
up front as one host tensor per layer pair (vLLM-V0-style CacheEngine)."""
import argparse, os, time
import torch
import common

log = common.log("engine")
ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Llama-3.1-70B-Instruct-AWQ")
ap.add_argument("--gpu-memory-utilization", type=float, default=0.90)
ap.add_argument("--swap-space", type=float, default=4, help="CPU swap space per GPU (GiB)")
ap.add_argument("--block-size", type=int, default=16)
args = ap.parse_args()

L, KVH, D = 80, 8, 128
page = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
log.info("Initializing an LLM engine (v0.6.3) with config: model=%s, dtype=float16, swap_space=%s, "
         "gpu_memory_utilization=%.2f, block_size=%d, tensor_parallel_size=1, enable_prefix_caching=False",
         args.model, args.swap_space, args.gpu_memory_utilization, args.block_size, )
total_cpu = page / 2**30
if args.swap_space > 0.7 * total_cpu:
    log.warning("Possibly too large swap space. %.2f GiB out of the %.2f GiB total CPU memory is allocated for the swap "
                "space.", args.swap_space, total_cpu)
free, total = torch.cuda.mem_get_info()
log.info("Loading model weights took %.4f GB", 36.9)
block_bytes = 2 * L * args.block_size * KVH * D * 2
gpu_blocks = int((total * args.gpu_memory_utilization - 40e9) // block_bytes)
cpu_blocks = int(args.swap_space * 2**30 // block_bytes)
log.info("Memory profiling takes %.2f seconds", 1.73)
log.info("# GPU blocks: %d, # CPU blocks: %d", gpu_blocks, cpu_blocks)
log.info("Maximum concurrency for 32768 tokens per request: %.2fx", gpu_blocks * args.block_size / 32768)

t0 = time.time()
gpu_cache = torch.empty(gpu_blocks * block_bytes // 2, dtype=torch.float16, device="cuda")
log.info("Allocated GPU KV cache: %.2f GiB", gpu_cache.numel() * 2 / 2**30)
# CPU swap space: one tensor of [2, num_cpu_blocks, block_size, kv_heads, head_dim] per layer, in one arena
cpu_cache = torch.empty(cpu_blocks * block_bytes // 2, dtype=torch.float16, device="cpu")
log.info("Allocated CPU swap space: %.2f GiB in %.2fs", cpu_cache.numel() * 2 / 2**30, time.time() - t0)
log.info("init engine (profile, create kv cache, warmup model) took %.2f seconds", time.time() - t0)
