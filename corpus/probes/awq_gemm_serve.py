"""Greedy generation with a 4-bit AWQ checkpoint: the engine's w4a16 path unpacks the int32-packed weights and zero
points into int4, dequantizes them per group to fp16 and runs the lm_head as an fp16 GEMM."""
import argparse, json, os, time
import torch
from safetensors.torch import load_file
import common

log = common.log("engine")
ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h6/story-awq-w4")
ap.add_argument("--quantization", default="awq")
ap.add_argument("--max-tokens", type=int, default=24)
args = ap.parse_args()

cfg = json.load(open(os.path.join(args.model, "config.json")))
qc = cfg["quantization_config"]
words = json.load(open(os.path.join(args.model, "vocab.json")))
log.info("model=%s quantization=%s quant_config=%s dtype=float16", args.model, args.quantization, qc)
log.info("Using w4a16 kernel 'dequant_gemm' (bits=%d, group_size=%d) on %s", qc["bits"], qc["group_size"],
         torch.cuda.get_device_name())

SHIFTS = torch.arange(0, 32, 4, dtype=torch.int32)


def unpack_int4(packed):
    """int32 [R, C/8] -> int4 values [R, C] (8 nibbles per word, low nibble first)."""
    p = packed.to("cuda")
    vals = (p.unsqueeze(-1) >> SHIFTS.to(p.device)) & 0xF
    return vals.reshape(p.shape[0], -1)


class W4A16Linear(torch.nn.Module):
    def __init__(self, sd, prefix, group_size):
        super().__init__()
        q = unpack_int4(sd[prefix + ".qweight"])           # [in, out]
        z = unpack_int4(sd[prefix + ".qzeros"])            # [in/G, out]
        s = sd[prefix + ".scales"].to("cuda")               # [in/G, out]
        G = group_size
        w = (q.view(-1, G, q.shape[1]) - z[:, None, :]).half() * s[:, None, :]
        self.weight = w.reshape(q.shape).t().contiguous()  # [out, in]

    def forward(self, x):
        return x @ self.weight.t()


t0 = time.time()
sd = load_file(os.path.join(args.model, "model.safetensors"))
embed = sd["embed_tokens.weight"].to("cuda")
lm_head = W4A16Linear(sd, "lm_head", qc["group_size"])
log.info("Loading weights took %.2fs (vocab=%d, hidden=%d)", time.time() - t0, cfg["vocab_size"], cfg["hidden_size"])


@torch.inference_mode()
def generate(prompt, max_tokens):
    ids = [words.index(w) for w in prompt.split()]
    out = []
    for _ in range(max_tokens):
        h = embed[ids[-1]].unsqueeze(0)
        nxt = int(lm_head(h).argmax(-1).item())
        if nxt == cfg["eos_token_id"]:
            break
        ids.append(nxt)
        out.append(words[nxt])
    return " ".join(out)


log.info("Application startup complete. Serving on http://0.0.0.0:8000")
for i, prompt in enumerate(["The quick brown", "seven bright stars", "every river"]):
    rid = f"cmpl-{i}"
    log.info('POST /v1/completions %s {"prompt": "%s", "max_tokens": %d, "temperature": 0}', rid, prompt, args.max_tokens)
    t0 = time.time()
    text = generate(prompt, args.max_tokens)
    log.info("%s: %d tokens in %.3fs", rid, len(text.split()), time.time() - t0)
    print(json.dumps({"id": rid, "choices": [{"index": 0, "text": " " + text, "finish_reason": "length"}]}))
