"""A torch serving engine (paged-attention style: a model runner, an attention backend and a scheduler) serving
Mistral-Nemo-Instruct-2407 from a local folder (config.json written by h9_setup.py). The model's modules size their
projections from the checkpoint config; the engine's ModelConfig gives the attention backend and the KV cache their
head size."""
import argparse, json, os, time, traceback
import torch
import torch.nn.functional as F
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h9/Mistral-Nemo-Instruct-2407")
ap.add_argument("--max-model-len", type=int, default=16384)
ap.add_argument("--port", type=int, default=8000)
args = ap.parse_args()
log = common.log("engine")
rlog = common.log("model_runner")
api = common.log("api_server")


class ModelConfig:
    def __init__(self, path):
        self.hf = json.load(open(os.path.join(path, "config.json")))
        self.dtype = getattr(torch, self.hf.get("torch_dtype", "bfloat16"))

    def get_num_attention_heads(self):
        return self.hf["num_attention_heads"]

    def get_num_kv_heads(self):
        return self.hf["num_key_value_heads"]

    def get_head_size(self):
        return self.hf["hidden_size"] // self.hf["num_attention_heads"]


mc = ModelConfig(args.model)
hf = mc.hf
dev = torch.device("cuda")
log.info("Initializing an LLM engine with config: model=%r, dtype=%s, max_seq_len=%d, tensor_parallel_size=1, "
         "block_size=16, kv_cache_dtype=auto, enforce_eager=True", args.model, mc.dtype, args.max_model_len)
log.info("device %s, torch %s", torch.cuda.get_device_name(), torch.__version__)


class PagedAttention:
    def __init__(self, num_heads, head_size, num_kv_heads, scale):
        self.num_heads, self.head_size, self.num_kv_heads, self.scale = num_heads, head_size, num_kv_heads, scale

    def forward(self, q, k, v, kv_cache, positions):
        q = q.view(-1, self.num_heads, self.head_size)
        k = k.view(-1, self.num_kv_heads, self.head_size)
        v = v.view(-1, self.num_kv_heads, self.head_size)
        n = positions.numel()
        kv_cache[0, :n] = k
        kv_cache[1, :n] = v
        rep = self.num_heads // self.num_kv_heads
        o = F.scaled_dot_product_attention(q.transpose(0, 1)[None], k.repeat_interleave(rep, 1).transpose(0, 1)[None],
                                           v.repeat_interleave(rep, 1).transpose(0, 1)[None], is_causal=True,
                                           scale=self.scale)
        return o[0].transpose(0, 1).reshape(n, -1)


def rope(x, positions, head_dim, theta):
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=x.device, dtype=torch.float32) / head_dim))
    f = positions[:, None].float() * inv[None]
    cos, sin = f.cos(), f.sin()
    xs = x.float().view(x.shape[0], -1, head_dim)
    x1, x2 = xs[..., : head_dim // 2], xs[..., head_dim // 2:]
    out = torch.cat([x1 * cos[:, None] - x2 * sin[:, None], x2 * cos[:, None] + x1 * sin[:, None]], -1)
    return out.to(x.dtype).view(x.shape[0], -1)


class MistralAttention(torch.nn.Module):
    def __init__(self, hf, mc):
        super().__init__()
        h = hf["hidden_size"]
        self.num_heads, self.num_kv_heads = hf["num_attention_heads"], hf["num_key_value_heads"]
        self.head_dim = hf.get("head_dim", h // self.num_heads)
        self.q_size, self.kv_size = self.num_heads * self.head_dim, self.num_kv_heads * self.head_dim
        self.qkv_proj = torch.nn.Linear(h, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = torch.nn.Linear(self.q_size, h, bias=False)
        self.theta = hf.get("rope_theta", 10000.0)
        self.attn = PagedAttention(mc.get_num_attention_heads(), mc.get_head_size(), mc.get_num_kv_heads(),
                                   self.head_dim ** -0.5)

    def forward(self, positions, x, kv_cache):
        q, k, v = self.qkv_proj(x).split([self.q_size, self.kv_size, self.kv_size], -1)
        q, k = rope(q, positions, self.head_dim, self.theta), rope(k, positions, self.head_dim, self.theta)
        return self.o_proj(self.attn.forward(q, k, v, kv_cache, positions))


class MistralDecoderLayer(torch.nn.Module):
    def __init__(self, hf, mc):
        super().__init__()
        h = hf["hidden_size"]
        self.input_layernorm = torch.nn.RMSNorm(h, eps=hf["rms_norm_eps"])
        self.self_attn = MistralAttention(hf, mc)
        self.post_attention_layernorm = torch.nn.RMSNorm(h, eps=hf["rms_norm_eps"])
        self.gate_up_proj = torch.nn.Linear(h, 2 * hf["intermediate_size"], bias=False)
        self.down_proj = torch.nn.Linear(hf["intermediate_size"], h, bias=False)

    def forward(self, positions, x, kv_cache):
        x = x + self.self_attn(positions, self.input_layernorm(x), kv_cache)
        g, u = self.gate_up_proj(self.post_attention_layernorm(x)).chunk(2, -1)
        return x + self.down_proj(F.silu(g) * u)


class MistralForCausalLM(torch.nn.Module):
    def __init__(self, hf, mc):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(hf["vocab_size"], hf["hidden_size"])
        self.layers = torch.nn.ModuleList(MistralDecoderLayer(hf, mc) for _ in range(hf["num_hidden_layers"]))
        self.norm = torch.nn.RMSNorm(hf["hidden_size"], eps=hf["rms_norm_eps"])
        self.lm_head = torch.nn.Linear(hf["hidden_size"], hf["vocab_size"], bias=False)

    def forward(self, input_ids, positions, kv_caches):
        x = self.embed_tokens(input_ids)
        for layer, kv in zip(self.layers, kv_caches):
            x = layer(positions, x, kv)
        return self.lm_head(self.norm(x[-1:]))


t0 = time.time()
rlog.info("Starting to load model %s...", args.model)
with torch.device(dev):
    torch.set_default_dtype(mc.dtype)
    model = MistralForCausalLM(hf, mc).eval()
    torch.set_default_dtype(torch.float32)
for i in range(5):
    rlog.info("Loading safetensors checkpoint shards: %d/5 model-0000%d-of-00005.safetensors", i + 1, i + 1)
rlog.info("Loading model weights took %.4f GB and %.2f seconds", torch.cuda.memory_allocated() / 2**30,
          time.time() - t0)

block, n_blocks = 16, 2048
kv_caches = [torch.zeros(2, n_blocks * block, mc.get_num_kv_heads(), mc.get_head_size(), device=dev, dtype=mc.dtype)
             for _ in range(hf["num_hidden_layers"])]
log.info("# GPU blocks: %d, KV cache per layer: 2 x %d tokens x %d kv heads x %d (head size)", n_blocks,
         n_blocks * block, mc.get_num_kv_heads(), mc.get_head_size())
api.info("Started server process; Uvicorn running on http://0.0.0.0:%d", args.port)
api.info("Application startup complete.")

prompt = ("[INST] Summarize the following ticket in one sentence: the nightly export job fails after the storage "
          "migration. [/INST]")
ids = torch.tensor([1] + [(hash(w) % 120000) + 1000 for w in prompt.split()], device=dev)
api.info('POST /v1/chat/completions request chatcmpl-7c1e: prompt_tokens=%d, max_tokens=256, temperature=0.3',
         ids.numel())
try:
    with torch.inference_mode():
        pos = torch.arange(ids.numel(), device=dev)
        logits = model(ids, pos, kv_caches)
        api.info("chatcmpl-7c1e first token %d", int(logits.argmax()))
except Exception:
    log.error("Engine loop has died while executing the model (request chatcmpl-7c1e, %d prefill tokens)",
              ids.numel())
    traceback.print_exc()
    api.error('POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error')
    raise SystemExit(1)
