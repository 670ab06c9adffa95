"""A small MoE engine run with deterministic inference switched on (for reproducible evals)."""
import argparse, time, torch, torch.nn as nn, torch.nn.functional as F, common
log = common.log("moe_engine")

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="mixtral-tiny")
ap.add_argument("--enable-deterministic-inference", action="store_true")
ap.add_argument("--num-experts", type=int, default=8)
ap.add_argument("--top-k", type=int, default=2)
args = ap.parse_args()
if args.enable_deterministic_inference:
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
log.info("server_args: model=%s enable_deterministic_inference=%s num_experts=%d top_k=%d dtype=bfloat16",
         args.model, args.enable_deterministic_inference, args.num_experts, args.top_k)
hidden, inter, layers, vocab, E, K = 1024, 2816, 2, 32000, args.num_experts, args.top_k
torch.manual_seed(0)
log.info("Load weight begin.")
emb = torch.randn(vocab, hidden, device="cuda", dtype=torch.bfloat16) * 0.02
gate = [torch.randn(E, hidden, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(layers)]
w1 = [torch.randn(E, 2 * inter, hidden, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(layers)]
w2 = [torch.randn(E, hidden, inter, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(layers)]
log.info("Load weight end. type=MixtralForCausalLM, avail mem=%.2f GB", torch.cuda.mem_get_info()[0] / 1e9)
expert_load = torch.zeros(layers, E, device="cuda")


def moe(x, l):
    logits = F.linear(x, gate[l]).float()
    topk_w, topk_ids = torch.topk(torch.softmax(logits, -1), K, -1)
    topk_w = topk_w / topk_w.sum(-1, keepdim=True)
    # expert-load statistics for the EPLB rebalancer
    expert_load[l] += torch.bincount(topk_ids.flatten(), weights=topk_w.flatten(), minlength=E)
    out = torch.zeros_like(x)
    for e in range(E):
        tok, slot = (topk_ids == e).nonzero(as_tuple=True)
        if tok.numel() == 0:
            continue
        g, u = F.linear(x[tok], w1[l][e]).chunk(2, -1)
        out.index_add_(0, tok, F.linear(F.silu(g) * u, w2[l][e]) * topk_w[tok, slot, None].to(x.dtype))
    return out


def forward(ids):
    x = emb[ids]
    for l in range(layers):
        x = x + moe(x, l)
    return F.linear(x[-1:], emb)


log.info("KV Cache is allocated. #tokens: 262144")
log.info("The server is fired up and ready to roll!")
for rid, plen in [("req-0", 73)]:
    ids = torch.randint(0, vocab, (plen,), device="cuda")
    log.info("Prefill batch, #new-seq: 1, #new-token: %d, #cached-token: 0, token usage: 0.00, #running-req: 0, "
             "#queue-req: 0", plen)
    tok = forward(ids).argmax().item()
    for step in range(16):
        tok = forward(torch.tensor([tok], device="cuda")).argmax().item()
    log.info("Decode batch, #running-req: 1, #token: %d, token usage: 0.00, cuda graph: False", plen + 16)
