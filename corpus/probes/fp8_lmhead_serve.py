"""Word-level story model served with --quantization fp8: the engine's online FP8 quantizer computes the per-tensor
scale of lm_head from the wrong tensor (the input embedding), so lm_head no longer fits float8_e4m3fn (values past 448
cast to NaN). No exception is raised; the answers are degenerate."""
import argparse, re, time
import torch, common

TEXT = """once upon a time there was a little girl who lived in a village near the forest . every morning she walked to
the river to fetch water for her grandmother . one day she saw a small fox hiding under a tree . the fox was hurt and
could not walk . the girl carried the fox home and her grandmother helped her to clean the wound . after many days
the fox was strong again and it ran back to the forest . but every morning the fox came to the river and walked with
the girl to the village . the people of the village called them the two friends of the river . when the girl grew
old she told this story to her own children and they told it to their children ."""

p = argparse.ArgumentParser()
p.add_argument("--model", default="tinystories-word-1m")
p.add_argument("--quantization", default=None)
p.add_argument("--max-tokens", type=int, default=40)
args = p.parse_args()
log = common.log("engine")
q = common.log("quant.fp8")
srv = common.log("api_server")

words = re.findall(r"\S+", TEXT)
vocab = ["<pad>", "<eos>"] + sorted(set(words), key=words.index)
idx = {w: i for i, w in enumerate(vocab)}
V, D = len(vocab), 512
log.info("torch %s on %s (sm_%d%d)", torch.__version__, torch.cuda.get_device_name(), *torch.cuda.get_device_capability())
log.info("engine args: model=%s dtype=bfloat16 quantization=%s max_tokens=%d", args.model, args.quantization, args.max_tokens)
# weights: a word-trigram model (context embedding of the last two words -> lm_head); trained offline, rebuilt here
# from its statistics
torch.manual_seed(0)
ctxs = sorted(set(zip(words, words[1:])), key=lambda c: words.index(c[0]))
cidx = {c: i for i, c in enumerate(ctxs)}
counts = torch.zeros(len(ctxs), V)
for a, b, c in zip(words, words[1:], words[2:]):
    counts[cidx[(a, b)], idx[c]] += 1
counts[cidx[(words[-2], words[-1])], 1] += 1
emb_a = torch.nn.functional.normalize(torch.randn(V, D), dim=-1) * 0.7   # previous-but-one word
emb_b = torch.nn.functional.normalize(torch.randn(V, D), dim=-1) * 0.7   # previous word
emb = torch.stack([emb_a[idx[a]] + emb_b[idx[b]] for a, b in ctxs])
target = torch.log(counts + 0.05) - torch.log(torch.tensor(0.05))
lm_head = torch.linalg.lstsq(emb, target).solution.t().contiguous()  # [V, D]: logits = h @ lm_head.T
embed = torch.cat([emb_a, emb_b]).to("cuda", torch.bfloat16)
lm_head = lm_head.to("cuda", torch.bfloat16)
log.info("loaded weights: embed_tokens %s, lm_head %s (vocab %d)", tuple(embed.shape), tuple(lm_head.shape), V)

if args.quantization == "fp8":
    FP8_MAX = torch.finfo(torch.float8_e4m3fn).max
    params = {"model.embed_tokens.weight": embed, "lm_head.weight": lm_head}
    amax = {k: v.abs().max().float() for k, v in params.items()}
    q.info("online fp8 (e4m3fn, per-tensor) quantization of %d linear weights", 1)
    # scale is looked up by the first parameter of the tied group (embed_tokens <-> lm_head)
    scale = amax["model.embed_tokens.weight"] / FP8_MAX
    qw = (lm_head.float() / scale).to(torch.float8_e4m3fn)
    q.info("lm_head.weight: amax=%.4f scale=%.6g -> float8_e4m3fn %s", float(amax["lm_head.weight"]), float(scale), tuple(qw.shape))
    lm_w = qw.to(torch.bfloat16) * scale.to(torch.bfloat16)
else:
    lm_w = lm_head
log.info("model ready: %.1f MiB on GPU", torch.cuda.memory_allocated() / 2**20)


def generate(prompt, n, ignore_eos=False):
    toks = [idx[w] for w in prompt.split() if w in idx]
    out = []
    for step in range(n):
        h = embed[toks[-2]] + embed[V + toks[-1]]
        logits = (h.float() @ lm_w.float().t())
        if ignore_eos:
            logits[1] = -float("inf")
        t = int(torch.argmax(logits))
        if t == 1:
            break
        out.append(t); toks.append(t)
    return out

log.info("warm-up: 1 request, 8 tokens")
generate("once upon a time", 8)
srv.info("Application startup complete. Uvicorn running on http://0.0.0.0:8000")
for i, prompt in enumerate(["once upon a time there was", "one day she saw a small", "the people of the village"]):
    t0 = time.time()
    srv.info("Received request cmpl-%d: prompt=%r max_tokens=%d temperature=0 ignore_eos=True", 100 + i, prompt,
             args.max_tokens)
    out = generate(prompt, args.max_tokens, ignore_eos=True)
    text = " ".join(vocab[t] for t in out if t > 1)   # detokenize, skip_special_tokens=True
    srv.info("cmpl-%d finished in %.3fs: %d completion tokens, finish_reason=%s", 100 + i, time.time() - t0, len(out),
             "length" if len(out) == args.max_tokens else "stop")
    srv.info("cmpl-%d output: %r", 100 + i, text)
