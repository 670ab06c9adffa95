"""OpenAI-style completion engine: a batch of long-document scoring requests asks for prompt_logprobs, and the engine
materialises full-vocabulary log-probabilities for every prompt position of the batch at once."""
import argparse, time
import torch, common

p = argparse.ArgumentParser()
p.add_argument("--model", default="Qwen2.5-7B-Instruct")
p.add_argument("--max-num-batched-tokens", type=int, default=131072)
p.add_argument("--gpu-memory-utilization", type=float, default=0.30)
args = p.parse_args()
log = common.log("engine")
srv = common.log("api_server")
free, total = torch.cuda.mem_get_info()
log.info("torch %s, device %s (%.1f GiB total, %.1f GiB free)", torch.__version__, torch.cuda.get_device_name(),
         total / 2**30, free / 2**30)
V, H, L = 151936, 3584, 2
log.info("engine args: model=%s dtype=bfloat16 max_model_len=32768 max_num_batched_tokens=%d enable_chunked_prefill=False "
         "gpu_memory_utilization=%.2f max_logprobs=20", args.model, args.max_num_batched_tokens, args.gpu_memory_utilization)
log.info("loading weights (vocab=%d hidden=%d, %d decoder layers in this shard)", V, H, L)
torch.manual_seed(0)
embed = (torch.randn(V, H, device="cuda", dtype=torch.bfloat16) * 0.02)
layers = [(torch.randn(H, H, device="cuda", dtype=torch.bfloat16) * 0.02) for _ in range(L)]
lm_head = (torch.randn(V, H, device="cuda", dtype=torch.bfloat16) * 0.02)
log.info("model weights loaded: %.2f GiB", torch.cuda.memory_allocated() / 2**30)
kv_bytes = int(args.gpu_memory_utilization * total) - torch.cuda.memory_allocated()
kv = torch.empty(kv_bytes // 2, dtype=torch.bfloat16, device="cuda")
log.info("KV cache: %.2f GiB reserved (%d blocks of 16 tokens)", kv_bytes / 2**30, kv_bytes // (16 * 2 * 28 * 512 * 2))
srv.info("Started server process; Uvicorn running on http://0.0.0.0:8000")


def forward(ids):
    h = embed[ids]
    for w in layers:
        h = h + torch.nn.functional.silu(h @ w)
    return h


def run_batch(reqs):
    ids = torch.cat([r["ids"] for r in reqs])
    log.info("scheduler: running %d reqs, %d prefill tokens", len(reqs), ids.numel())
    h = forward(ids)
    if any(r["prompt_logprobs"] for r in reqs):
        logits = h @ lm_head.t()                          # [num_tokens, vocab]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        top = logprobs.topk(max(r["prompt_logprobs"] for r in reqs), dim=-1)
    else:
        logits = h[-1:] @ lm_head.t()
        top = None
    torch.cuda.synchronize()
    return top

# health-check style request
r0 = {"ids": torch.randint(0, V, (12,), device="cuda"), "prompt_logprobs": 0}
run_batch([r0])
srv.info('127.0.0.1:50122 - "POST /v1/completions HTTP/1.1" 200 OK')
reqs = []
for i in range(8):
    n = 16384
    reqs.append({"ids": torch.randint(0, V, (n,), device="cuda"), "prompt_logprobs": 20})
    srv.info("Received request cmpl-%04x: prompt: <%d tokens>, params: SamplingParams(n=1, temperature=0.0, max_tokens=1, "
             "prompt_logprobs=20, logprobs=None)", 0x3a10 + i, n)
t0 = time.time()
out = run_batch(reqs)
log.info("batch done in %.2fs", time.time() - t0)
