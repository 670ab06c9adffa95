"""A torch decode loop compiled with torch.compile(mode="reduce-overhead") (Inductor + CUDA graphs), serving greedy
requests with a repetition guard that compares each step's logits with the previous step's."""
import argparse, time
import torch
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Llama-3.2-1B-Instruct")
ap.add_argument("--max-tokens", type=int, default=24)
ap.add_argument("--compile-mode", default="reduce-overhead")
args = ap.parse_args()
log = common.log("engine")
log.info("torch %s, device %s", torch.__version__, torch.cuda.get_device_name())
log.info("model=%s dtype=bfloat16 compile_mode=%s max_batch=8", args.model, args.compile_mode)

V, H, L, B = 32000, 1024, 4, 8
torch.manual_seed(0)
dev = "cuda"
embed = torch.randn(V, H, device=dev, dtype=torch.bfloat16) * 0.02
Ws = [(torch.randn(H, 4 * H, device=dev, dtype=torch.bfloat16) * 0.02,
       torch.randn(4 * H, H, device=dev, dtype=torch.bfloat16) * 0.02) for _ in range(L)]
norm_w = torch.ones(H, device=dev, dtype=torch.bfloat16)
lm_head = torch.randn(V, H, device=dev, dtype=torch.bfloat16) * 0.02
log.info("weights loaded: %.2f GiB", torch.cuda.memory_allocated() / 2**30)


def rms(x):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * norm_w


def decode_step(tokens):
    h = embed[tokens]
    for w1, w2 in Ws:
        h = h + torch.nn.functional.gelu(rms(h) @ w1) @ w2
    return (rms(h) @ lm_head.t()).float()


step = torch.compile(decode_step, mode=args.compile_mode, fullgraph=True)


@torch.inference_mode()
def generate(prompts, max_tokens):
    tokens = torch.tensor([p[-1] for p in prompts], device=dev)
    out = [[] for _ in prompts]
    prev_logits = None
    for t in range(max_tokens):
        t0 = time.time()
        logits = step(tokens)
        scores = logits
        if prev_logits is not None:
            # repetition guard: damp tokens whose logit rose sharply since the last step
            scores = logits - 0.1 * (logits - prev_logits).clamp(min=0)
        prev_logits = logits
        tokens = scores.argmax(-1)
        for i, tok in enumerate(tokens.tolist()):
            out[i].append(tok)
        log.info("decode step %d: batch=%d, %.1f ms", t, len(prompts), 1000 * (time.time() - t0))
    return out


prompts = [[1, 15043 + i, 29892, 590, 1024 + 7 * i] for i in range(B)]
log.info("Uvicorn running on http://0.0.0.0:8000")
common.log("api_server").info("received %d requests (max_tokens=%d)", B, args.max_tokens)
log.info("prefill done for %d requests; decoding (first step compiles the decode graph)", B)
res = generate(prompts, args.max_tokens)
log.info("finished %d requests, %d tokens each", len(res), len(res[0]))
