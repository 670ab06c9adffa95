"""Setup (not a probe): an expert-pruned MoE checkpoint for moe_pruned_router.py (DIR/model.pt + config.json)."""
import json, os, sys, torch
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
H, I, E, L, V, keep = 256, 128, 64, 2, 4096, 60
cfg = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": H, "moe_intermediate_size": I,
       "num_experts": E, "num_experts_per_tok": 8, "num_hidden_layers": L, "vocab_size": V, "torch_dtype": "float32",
       "pruning": {"method": "reap", "experts_removed_per_layer": E - keep}}
torch.manual_seed(0)
sd = {"model.embed_tokens.weight": torch.randn(V, H), "lm_head.weight": torch.randn(V, H) * 0.02}
for i in range(L):
    p = f"model.layers.{i}.mlp."
    sd[p + "gate.weight"] = torch.randn(E, H) * 0.5
    for e in range(keep):
        sd[f"{p}experts.{e}.gate_up_proj.weight"] = torch.randn(2 * I, H) * 0.02
        sd[f"{p}experts.{e}.down_proj.weight"] = torch.randn(H, I) * 0.02
torch.save(sd, os.path.join(d, "model.pt"))
json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
print("wrote", d)
