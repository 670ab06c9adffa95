"""An engine that sizes its KV cache pool from the free memory right after loading weights, then warms up."""
import argparse, time, torch, torch.nn as nn, torch.nn.functional as F, common
log = common.log("engine")

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="llama-3.2-3b-like")
ap.add_argument("--gpu-memory-utilization", type=float, default=1.0)
args = ap.parse_args()
hidden, layers, inter, vocab, kv_heads, head_dim, page = 3072, 4, 8192, 128256, 8, 128, 16
log.info("server_args: model=%s dtype=bfloat16 gpu_memory_utilization=%.2f page_size=%d cuda_graph=False",
         args.model, args.gpu_memory_utilization, page)
free0, total = torch.cuda.mem_get_info()
log.info("Init torch distributed ends. avail mem=%.2f GiB", free0 / 2**30)
log.info("Load weight begin. avail mem=%.2f GiB", free0 / 2**30)
w = {"embed": torch.empty(vocab, hidden, device="cuda", dtype=torch.bfloat16).normal_(std=0.02)}
for i in range(layers):
    w[f"{i}.qkv"] = torch.empty(hidden + 2 * kv_heads * head_dim, hidden, device="cuda", dtype=torch.bfloat16).normal_(std=0.02)
    w[f"{i}.o"] = torch.empty(hidden, hidden, device="cuda", dtype=torch.bfloat16).normal_(std=0.02)
    w[f"{i}.gate_up"] = torch.empty(2 * inter, hidden, device="cuda", dtype=torch.bfloat16).normal_(std=0.02)
    w[f"{i}.down"] = torch.empty(hidden, inter, device="cuda", dtype=torch.bfloat16).normal_(std=0.02)
torch.cuda.synchronize()
free1, _ = torch.cuda.mem_get_info()
log.info("Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GiB, mem usage=%.2f GiB.",
         free1 / 2**30, (free0 - free1) / 2**30)
# KV pool: everything the utilization target leaves, in 2 MiB granules
budget = int(free1 - (1 - args.gpu_memory_utilization) * total)
granule = 2 << 20
pool_bytes = (budget // granule - 1) * granule
per_token = layers * 2 * kv_heads * head_dim * 2
kv_pool = torch.empty(pool_bytes, dtype=torch.uint8, device="cuda")
log.info("KV Cache is allocated. #tokens: %d, K size: %.2f GB, V size: %.2f GB", pool_bytes // per_token,
         pool_bytes / 2 / 1e9, pool_bytes / 2 / 1e9)
log.info("Memory pool end. avail mem=%.2f GiB", torch.cuda.mem_get_info()[0] / 2**30)
log.info("max_total_num_tokens=%d, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=256, "
         "context_len=131072", pool_bytes // per_token)
log.info("Start warmup: 1 request, 16 tokens")
x = w["embed"][torch.arange(16, device="cuda")]
for i in range(layers):
    qkv = F.linear(x, w[f"{i}.qkv"])
    x = x + F.linear(qkv[:, :hidden], w[f"{i}.o"])
    g, u = F.linear(x, w[f"{i}.gate_up"]).chunk(2, -1)
    x = x + F.linear(F.silu(g) * u, w[f"{i}.down"])
logits = F.linear(x[-1:], w["embed"])
log.info("warmup token: %d", logits.argmax().item())
log.info("The server is fired up and ready to roll!")
