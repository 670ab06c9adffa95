"""Multi-LoRA serving: a bfloat16 base model, adapters loaded per request from their own safetensors files."""
import argparse, json, os, time, torch, torch.nn as nn, torch.nn.functional as F, common
from safetensors.torch import load_file
log = common.log("lora_engine")

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="llama-tiny-2b")
ap.add_argument("--dtype", default="bfloat16")
ap.add_argument("--enable-lora", action="store_true")
ap.add_argument("--lora-modules", default="")
args = ap.parse_args()
dtype = getattr(torch, args.dtype)
log.info("engine args: model=%s dtype=%s enable_lora=%s lora_modules=%s max_loras=4", args.model, args.dtype,
         args.enable_lora, args.lora_modules)
hidden, layers, heads, vocab = 2048, 4, 16, 32000
dev = "cuda"


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.lora = {}

    def proj(self, name, x, adapter):
        y = getattr(self, name)(x)
        if adapter is not None and (adapter, name) in self.lora:
            a, b, scale = self.lora[(adapter, name)]
            y = y + F.linear(F.linear(x, a), b) * scale
        return y

    def forward(self, x, adapter=None):
        b, s, _ = x.shape
        q = self.proj("q_proj", x, adapter).view(b, s, heads, -1).transpose(1, 2)
        k = self.proj("k_proj", x, adapter).view(b, s, heads, -1).transpose(1, 2)
        v = self.proj("v_proj", x, adapter).view(b, s, heads, -1).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(o.transpose(1, 2).reshape(b, s, hidden))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(Attn() for _ in range(layers))
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, ids, adapter=None):
        x = self.embed_tokens(ids)
        for l in self.layers:
            x = x + l(x, adapter)
        return self.lm_head(x[:, -1])


log.info("Loading model weights for %s (%d layers, hidden %d) in %s", args.model, layers, hidden, dtype)
t0 = time.time()
model = Model().to(device=dev, dtype=dtype).eval()
for p in model.parameters():
    nn.init.normal_(p, std=0.02)
log.info("Model loading took %.2f GiB and %.2f seconds", torch.cuda.memory_allocated() / 2**30, time.time() - t0)
log.info("Memory profiling: peak %.2f GiB, KV cache gets 12000 blocks", torch.cuda.max_memory_allocated() / 2**30)

adapters = {}
for spec in filter(None, args.lora_modules.split(",")):
    name, path = spec.split("=")
    acfg = json.load(open(os.path.join(path, "adapter_config.json")))
    sd = load_file(os.path.join(path, "adapter_model.safetensors"))
    scale = acfg["lora_alpha"] / acfg["r"]
    for i, layer in enumerate(model.layers):
        for mod in acfg["target_modules"]:
            pre = f"base_model.model.model.layers.{i}.self_attn.{mod}"
            layer.lora[(name, mod)] = (sd[pre + ".lora_A.weight"].to(dev), sd[pre + ".lora_B.weight"].to(dev), scale)
    adapters[name] = acfg
    log.info("Loaded LoRA adapter %s from %s: r=%d alpha=%d target_modules=%s", name, path, acfg["r"],
             acfg["lora_alpha"], acfg["target_modules"])

log.info("Warming up the base model")
with torch.inference_mode():
    model(torch.randint(0, vocab, (2, 64), device=dev))
torch.cuda.synchronize()
log.info("Warm-up done. Serving on http://0.0.0.0:8000")

g = torch.Generator(device="cpu").manual_seed(1)
reqs = [("cmpl-7a1f", None, 41, 24), ("cmpl-7a20", None, 18, 24), ("cmpl-7a21", "sql-lora", 57, 32)]
with torch.inference_mode():
    for rid, adapter, plen, gen in reqs:
        ids = torch.randint(0, vocab, (1, plen), generator=g).to(dev)
        log.info("Received request %s: prompt_tokens=%d max_tokens=%d lora=%s", rid, plen, gen, adapter)
        log.info("prefill %s: %d tokens", rid, plen)
        out = []
        for step in range(gen):
            nxt = model(ids, adapter).argmax(-1, keepdim=True)
            out.append(nxt.item())
            ids = torch.cat([ids, nxt], 1)
        log.info("Finished request %s: completion_tokens=%d", rid, len(out))
        log.info('127.0.0.1:53112 - "POST /v1/completions HTTP/1.1" 200 OK')
