"""Sizes the paged KV cache from the GPU's total memory times gpu_memory_utilization, as if the GPU were its own."""
import argparse, torch, common
log = common.log("engine")
ap = argparse.ArgumentParser()
ap.add_argument("--gpu-memory-utilization", type=float, default=0.90)
ap.add_argument("--max-model-len", type=int, default=32768)
args = ap.parse_args()
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
log.info("non-default args: {'gpu_memory_utilization': %s, 'max_model_len': %d}", args.gpu_memory_utilization, args.max_model_len)
layers, kv_heads, head_dim, block = 32, 8, 128, 16
log.info("Loading model: layers=%d kv_heads=%d head_dim=%d dtype=bfloat16", layers, kv_heads, head_dim)
weights = [torch.empty(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(8)]
weights_bytes = torch.cuda.memory_allocated()
log.info("Model loading took %.2f GiB", weights_bytes / 2**30)
total = torch.cuda.get_device_properties(0).total_memory
peak_act = 2 * 2**30
kv_bytes = int(total * args.gpu_memory_utilization) - weights_bytes - peak_act
log.info("Memory profiling: total_gpu_memory=%.2f GiB, weights=%.2f GiB, peak activations=%.2f GiB",
         total / 2**30, weights_bytes / 2**30, peak_act / 2**30)
log.info("Available KV cache memory: %.2f GiB", kv_bytes / 2**30)
per_block = 2 * layers * block * kv_heads * head_dim * 2
num_blocks = kv_bytes // per_block
log.info("# GPU blocks: %d, # CPU blocks: 0", num_blocks)
log.info("GPU KV cache size: {:,} tokens".format(num_blocks * block))
kv_cache = []
for layer in range(layers):
    kv_cache.append(torch.zeros(2, num_blocks, block, kv_heads, head_dim, device="cuda", dtype=torch.bfloat16))
log.info("KV cache allocated: %d layers", layers)
log.info("Capturing CUDA graphs ...")
