"""MoE serving engine loading an expert-pruned checkpoint: the pruning tool dropped 4 of 64 routed experts from every
layer's weights, but left the router (gate) at 64 outputs and config.num_experts at 64."""
import argparse, json, os, time
import torch, common
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--model", required=True)
p.add_argument("--port", type=int, default=8000)
args = p.parse_args()
log = common.log("engine")
ld = common.log("model_loader")
srv = common.log("api_server")

cfg = json.load(open(os.path.join(args.model, "config.json")))
log.info("torch %s, device %s", torch.__version__, torch.cuda.get_device_name())
log.info("model config: %s", json.dumps(cfg))
sd = torch.load(os.path.join(args.model, "model.pt"), map_location="cpu", weights_only=True)
H, I, E, K, L = cfg["hidden_size"], cfg["moe_intermediate_size"], cfg["num_experts"], cfg["num_experts_per_tok"], cfg["num_hidden_layers"]


class MoE(torch.nn.Module):
    def __init__(self, i):
        super().__init__()
        p = f"model.layers.{i}.mlp."
        self.gate = sd[p + "gate.weight"].cuda()                      # [num_experts, H]
        ex = sorted(int(k.split(".")[5]) for k in sd if k.startswith(p + "experts.") and k.endswith("gate_up_proj.weight"))
        self.w13 = torch.stack([sd[f"{p}experts.{e}.gate_up_proj.weight"] for e in ex]).cuda()  # [n_local, 2I, H]
        self.w2 = torch.stack([sd[f"{p}experts.{e}.down_proj.weight"] for e in ex]).cuda()      # [n_local, H, I]
        self.n_local = len(ex)

    def forward(self, x):
        logits = x @ self.gate.t()
        w, idx = torch.topk(logits.softmax(-1), K, dim=-1)
        w = w / w.sum(-1, keepdim=True)
        flat = idx.reshape(-1)
        w13 = self.w13.index_select(0, flat).view(x.shape[0], K, 2 * I, H)
        w2 = self.w2.index_select(0, flat).view(x.shape[0], K, H, I)
        gu = torch.einsum("th,tkih->tki", x, w13)
        g, u = gu.chunk(2, dim=-1)
        y = torch.einsum("tki,tkhi->tkh", F.silu(g) * u, w2)
        return (y * w.unsqueeze(-1)).sum(1)


t0 = time.time()
embed = sd["model.embed_tokens.weight"].cuda()
layers = []
for i in range(L):
    layers.append(MoE(i))
ld.info("loaded %d MoE layers: router outputs %d, routed experts per layer %d, top-k %d (%.1fs)", L,
        layers[0].gate.shape[0], layers[0].n_local, K, time.time() - t0)
lm_head = sd["lm_head.weight"].cuda()
log.info("model weights loaded: %.2f GiB", torch.cuda.memory_allocated() / 2**30)
log.info("skipping warm-up (--enforce-eager, --skip-warmup)")
srv.info("Started server process [%d]", os.getpid())
srv.info("Application startup complete.")
srv.info("Uvicorn running on http://0.0.0.0:%d (Press CTRL+C to quit)", args.port)

torch.manual_seed(1)
prompt = torch.randint(0, embed.shape[0], (512,), device="cuda")
srv.info("Received request chatcmpl-7f3a: prompt: <512 tokens>, params: SamplingParams(temperature=0.7, max_tokens=256)")
log.info("prefill: req chatcmpl-7f3a, 512 tokens")
h = embed[prompt].float()
for layer in layers:
    h = h + layer(h)
logits = h[-1] @ lm_head.t()
tok = int(torch.argmax(logits))
log.info("first token %d", tok)
