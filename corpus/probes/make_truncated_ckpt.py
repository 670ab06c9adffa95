"""Set-up for load_truncated_shard.py: writes a two-shard safetensors checkpoint, then cuts the second shard short
(an interrupted copy). Prints nothing."""
import json, os, sys
import torch
from safetensors.torch import save_file

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h3-ckpt"
os.makedirs(out, exist_ok=True)
cfg = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 512, "intermediate_size": 1408,
       "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 8000,
       "max_position_embeddings": 2048, "torch_dtype": "float16"}
json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=2)
g = torch.Generator().manual_seed(0)
def w(*s): return (torch.randn(*s, generator=g) * 0.02).half()
tensors = {"model.embed_tokens.weight": w(8000, 512), "model.norm.weight": torch.ones(512).half(), "lm_head.weight": w(8000, 512)}
for i in range(4):
    p = f"model.layers.{i}."
    tensors.update({p + "self_attn.q_proj.weight": w(512, 512), p + "self_attn.k_proj.weight": w(512, 512),
                    p + "self_attn.v_proj.weight": w(512, 512), p + "self_attn.o_proj.weight": w(512, 512),
                    p + "mlp.gate_proj.weight": w(1408, 512), p + "mlp.up_proj.weight": w(1408, 512),
                    p + "mlp.down_proj.weight": w(512, 1408), p + "input_layernorm.weight": torch.ones(512).half(),
                    p + "post_attention_layernorm.weight": torch.ones(512).half()})
names = sorted(tensors)
shards = {"model-00001-of-00002.safetensors": [n for n in names if not n.startswith(("model.layers.2", "model.layers.3", "lm_head"))]}
shards["model-00002-of-00002.safetensors"] = [n for n in names if n not in shards["model-00001-of-00002.safetensors"]]
index = {"metadata": {"total_size": sum(t.numel() * 2 for t in tensors.values())}, "weight_map": {}}
for fn, ns in shards.items():
    save_file({n: tensors[n] for n in ns}, os.path.join(out, fn), metadata={"format": "pt"})
    index["weight_map"].update({n: fn for n in ns})
json.dump(index, open(os.path.join(out, "model.safetensors.index.json"), "w"), indent=2)
p = os.path.join(out, "model-00002-of-00002.safetensors")
with open(p, "r+b") as f:
    f.truncate(int(os.path.getsize(p) * 0.63))
