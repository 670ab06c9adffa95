"""A torch serving engine started with --dtype auto on a fine-tuned 36B checkpoint: the engine resolves the dtype from
config.json, builds the model's modules directly on the GPU in that dtype, then streams the safetensors shards into
them (the folder is written by h9_setup.py)."""
import argparse, json, os, time
import torch
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h9/seed-oss-36b-sft")
ap.add_argument("--dtype", default="auto")
ap.add_argument("--max-model-len", type=int, default=32768)
ap.add_argument("--gpu-memory-utilization", type=float, default=0.92)
args = ap.parse_args()
log = common.log("engine")
mlog = common.log("model_loader")

cfg = json.load(open(os.path.join(args.model, "config.json")))
if args.dtype == "auto":
    dtype = getattr(torch, cfg.get("torch_dtype", "bfloat16"))
else:
    dtype = getattr(torch, args.dtype)
log.info("Initializing an LLM engine with config: model=%r, tokenizer=%r, dtype=%s, max_seq_len=%d, "
         "tensor_parallel_size=1, gpu_memory_utilization=%.2f, quantization=None, enforce_eager=False", args.model,
         args.model, dtype, args.max_model_len, args.gpu_memory_utilization)
log.info("architecture %s, %d layers, hidden %d, heads %d/%d, vocab %d", cfg["architectures"][0],
         cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
         cfg["vocab_size"])
props = torch.cuda.get_device_properties(0)
log.info("device %s, %.2f GiB", props.name, props.total_memory / 2**30)


class Attention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        hd, nh, nkv, h = c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"], c["hidden_size"]
        self.qkv_proj = torch.nn.Linear(h, (nh + 2 * nkv) * hd, bias=c.get("attention_bias", False))
        self.o_proj = torch.nn.Linear(nh * hd, h, bias=False)


class MLP(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_up_proj = torch.nn.Linear(c["hidden_size"], 2 * c["intermediate_size"], bias=False)
        self.down_proj = torch.nn.Linear(c["intermediate_size"], c["hidden_size"], bias=False)


class DecoderLayer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = torch.nn.RMSNorm(c["hidden_size"], eps=c["rms_norm_eps"])
        self.self_attn = Attention(c)
        self.post_attention_layernorm = torch.nn.RMSNorm(c["hidden_size"], eps=c["rms_norm_eps"])
        self.mlp = MLP(c)


class SeedOssForCausalLM(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = torch.nn.ModuleList()
        for i in range(c["num_hidden_layers"]):
            self.layers.append(DecoderLayer(c))
            if i % 8 == 7:
                mlog.info("initialized %d/%d decoder layers (%.2f GiB allocated)", i + 1, c["num_hidden_layers"],
                          torch.cuda.memory_allocated() / 2**30)
        self.norm = torch.nn.RMSNorm(c["hidden_size"], eps=c["rms_norm_eps"])
        self.lm_head = torch.nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)


def load_model():
    mlog.info("Starting to load model %s...", args.model)
    t0 = time.time()
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("cuda:0"):
            model = SeedOssForCausalLM(cfg)
    finally:
        torch.set_default_dtype(old)
    index = json.load(open(os.path.join(args.model, "model.safetensors.index.json")))
    shards = sorted(set(index["weight_map"].values()))
    for i, s in enumerate(shards):
        mlog.info("Loading safetensors checkpoint shards: %d/%d %s", i + 1, len(shards), s)
    mlog.info("Loading weights took %.2f seconds", time.time() - t0)
    return model


model = load_model()
log.info("Model loading took %.4f GiB", torch.cuda.memory_allocated() / 2**30)
