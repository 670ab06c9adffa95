"""An engine's model loader: builds the model's modules from config.json, streams the safetensors shards into them by
name, and refuses to serve when any parameter was left uninitialized."""
import argparse, glob, json, os, time
import torch
import torch.nn as nn
from safetensors import safe_open
import common

log = common.log("model_loader")
ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h6/qwen-tiny-sft")
ap.add_argument("--dtype", default="bfloat16")
args = ap.parse_args()


class Qwen2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        hd = c["hidden_size"] // c["num_attention_heads"]
        self.q_proj = nn.Linear(c["hidden_size"], c["num_attention_heads"] * hd, bias=True)
        self.k_proj = nn.Linear(c["hidden_size"], c["num_key_value_heads"] * hd, bias=True)
        self.v_proj = nn.Linear(c["hidden_size"], c["num_key_value_heads"] * hd, bias=True)
        self.o_proj = nn.Linear(c["num_attention_heads"] * hd, c["hidden_size"], bias=False)


class Qwen2MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c["hidden_size"], c["intermediate_size"], bias=False)
        self.up_proj = nn.Linear(c["hidden_size"], c["intermediate_size"], bias=False)
        self.down_proj = nn.Linear(c["intermediate_size"], c["hidden_size"], bias=False)


class RMSNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n))


class Qwen2DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Qwen2Attention(c)
        self.mlp = Qwen2MLP(c)
        self.input_layernorm = RMSNorm(c["hidden_size"])
        self.post_attention_layernorm = RMSNorm(c["hidden_size"])


class Qwen2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Qwen2DecoderLayer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"])


class Qwen2ForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.model = Qwen2Model(c)
        if c.get("tie_word_embeddings", False):
            self.lm_head = self.model.embed_tokens
        else:
            self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)


cfg = json.load(open(os.path.join(args.model, "config.json")))
log.info("Starting to load model %s...", args.model)
log.info("architectures=%s, hidden_size=%d, num_hidden_layers=%d, vocab_size=%d, tie_word_embeddings=%s, dtype=%s",
         cfg["architectures"], cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"],
         cfg.get("tie_word_embeddings"), args.dtype)
with torch.device("cuda"):
    model = {"Qwen2ForCausalLM": Qwen2ForCausalLM}[cfg["architectures"][0]](cfg).to(getattr(torch, args.dtype))
params = dict(model.named_parameters())
t0 = time.time()
loaded = set()
files = sorted(glob.glob(os.path.join(args.model, "*.safetensors")))
for i, f in enumerate(files):
    with safe_open(f, framework="pt", device="cuda") as sf:
        for name in sf.keys():
            if name not in params:
                log.warning("skipping unexpected weight %s", name)
                continue
            t = sf.get_tensor(name)
            if params[name].shape != t.shape:
                raise ValueError(f"Attempted to load weight ({t.shape}) into parameter ({params[name].shape}) for {name}")
            params[name].data.copy_(t)
            loaded.add(name)
    log.info("Loading safetensors checkpoint shards: %d/%d %s (%.2fs)", i + 1, len(files), os.path.basename(f), time.time() - t0)
missing = set(params) - loaded
if missing:
    raise ValueError(f"Following weights were not initialized from checkpoint: {missing}")
log.info("Loading weights took %.2f seconds", time.time() - t0)
log.info("Model loading took %.4f GiB memory", torch.cuda.memory_allocated() / 2**30)
