"""An engine's memory profiling run: a dummy forward over max_num_batched_tokens to find the peak activation size
before sizing the KV cache."""
import argparse, math, time, torch, torch.nn as nn, torch.nn.functional as F, common
log = common.log("model_runner")

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="qwen2-1.5b-like")
ap.add_argument("--max-num-batched-tokens", type=int, default=8192)
ap.add_argument("--gpu-memory-utilization", type=float, default=0.9)
args = ap.parse_args()
hidden, layers, heads, kv_heads, inter, vocab, theta = 1536, 4, 12, 2, 8960, 151936, 1000000.0
head_dim = hidden // heads


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, max_pos, base):
        super().__init__()
        inv = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(max_pos).float()
        freqs = torch.outer(t, inv)
        emb = torch.cat([freqs, freqs], -1)
        self.cos_cached = emb.cos()
        self.sin_cached = emb.sin()

    def forward(self, q, k, positions):
        cos = self.cos_cached[positions].unsqueeze(1).to(q.dtype)
        sin = self.sin_cached[positions].unsqueeze(1).to(q.dtype)

        def rot(x):
            x1, x2 = x.chunk(2, -1)
            return torch.cat([-x2, x1], -1)
        return q * cos + rot(q) * sin, k * cos + rot(k) * sin


class Layer(nn.Module):
    def __init__(self, rope):
        super().__init__()
        self.qkv_proj = nn.Linear(hidden, (heads + 2 * kv_heads) * head_dim, bias=True)
        self.o_proj = nn.Linear(heads * head_dim, hidden, bias=False)
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)
        self.rotary_emb = rope

    def forward(self, x, positions):
        n = x.shape[0]
        q, k, v = self.qkv_proj(x).split([heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], -1)
        q = q.view(n, heads, head_dim)
        k = k.view(n, kv_heads, head_dim)
        q, k = self.rotary_emb(q, k, positions)
        k = k.repeat_interleave(heads // kv_heads, 1)
        v = v.view(n, kv_heads, head_dim).repeat_interleave(heads // kv_heads, 1)
        o = F.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True)
        x = x + self.o_proj(o.transpose(0, 1).reshape(n, -1))
        g, u = self.gate_up_proj(x).chunk(2, -1)
        return x + self.down_proj(F.silu(g) * u)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        rope = RotaryEmbedding(head_dim, 32768, theta)
        self.layers = nn.ModuleList(Layer(rope) for _ in range(layers))

    def forward(self, ids, positions):
        x = self.embed_tokens(ids)
        for l in self.layers:
            x = l(x, positions)
        return x


log.info("Initializing an LLM engine with config: model=%s, dtype=torch.bfloat16, max_seq_len=32768, "
         "max_num_batched_tokens=%d, gpu_memory_utilization=%.2f, enforce_eager=True", args.model,
         args.max_num_batched_tokens, args.gpu_memory_utilization)
log.info("Starting to load model %s...", args.model)
t0 = time.time()
model = Model().to(device="cuda", dtype=torch.bfloat16).eval()
log.info("Loading weights took %.2f seconds", time.time() - t0)
log.info("Model loading took %.4f GiB and %.6f seconds", torch.cuda.memory_allocated() / 2**30, time.time() - t0)
n = args.max_num_batched_tokens
log.info("Profiling memory: dummy run with %d tokens", n)
torch.cuda.reset_peak_memory_stats()
with torch.inference_mode():
    ids = torch.zeros(n, dtype=torch.long, device="cuda")
    positions = torch.arange(n, device="cuda")
    model(ids, positions)
torch.cuda.synchronize()
free, total = torch.cuda.mem_get_info()
log.info("Memory profiling takes %.2f seconds; peak activation %.2f GiB", time.time() - t0,
         torch.cuda.max_memory_allocated() / 2**30)
log.info("# GPU blocks: %d", int((total * args.gpu_memory_utilization - torch.cuda.max_memory_allocated()) // (16 * 2 * 4 * kv_heads * head_dim * 2)))
