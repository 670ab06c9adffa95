"""Setup for run-h10.sh (not a probe): files under DIR (default /tmp/h10).

  Qwen2.5-14B-Instruct-tp/   a checkpoint in five safetensors files plus model.safetensors.index.json (small tensors
                             with the real names; 10 layers per file), as the tensor-parallel loader reads it
"""
import json, os, sys

import torch
from safetensors.torch import save_file

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h10"
d = os.path.join(out, "Qwen2.5-14B-Instruct-tp")
os.makedirs(d, exist_ok=True)
n_files, layers = 5, 48
g = torch.Generator().manual_seed(0)
wm, total = {}, 0
for f in range(n_files):
    name = "model-%05d-of-%05d.safetensors" % (f + 1, n_files)
    tensors = {}
    lo, hi = f * layers // n_files, (f + 1) * layers // n_files
    for i in range(lo, hi):
        for t, shp in (("self_attn.q_proj.weight", (640, 640)), ("self_attn.k_proj.weight", (128, 640)),
                       ("self_attn.v_proj.weight", (128, 640)), ("self_attn.o_proj.weight", (640, 640)),
                       ("mlp.gate_proj.weight", (2176, 640)), ("mlp.up_proj.weight", (2176, 640)),
                       ("mlp.down_proj.weight", (640, 2176)), ("input_layernorm.weight", (640,)),
                       ("post_attention_layernorm.weight", (640,))):
            tensors[f"model.layers.{i}.{t}"] = torch.randn(shp, generator=g).to(torch.bfloat16)
    if f == 0:
        tensors["model.embed_tokens.weight"] = torch.randn(8192, 640, generator=g).to(torch.bfloat16)
    if f == n_files - 1:
        tensors["model.norm.weight"] = torch.ones(640, dtype=torch.bfloat16)
        tensors["lm_head.weight"] = torch.randn(8192, 640, generator=g).to(torch.bfloat16)
    save_file(tensors, os.path.join(d, name), metadata={"format": "pt"})
    for k, v in tensors.items():
        wm[k] = name
        total += v.numel() * v.element_size()
with open(os.path.join(d, "model.safetensors.index.json"), "w") as fh:
    json.dump({"metadata": {"total_size": total}, "weight_map": wm}, fh, indent=2)
print("wrote", d, "total", total)
