"""A small torch completion server for a fine-tuned story model (folder written by h9_setup.py: config.json, vocab.json,
model.safetensors). The loader maps checkpoint tensors onto the model's parameters and, as the config asks, shares the
input embedding with the output projection when tie_word_embeddings is set."""
import argparse, json, os, time
import torch
from safetensors import safe_open
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h9/story-1.5b-sft")
ap.add_argument("--max-tokens", type=int, default=16)
ap.add_argument("--port", type=int, default=8000)
args = ap.parse_args()
log = common.log("engine")
llog = common.log("loader")
api = common.log("api_server")

cfg = json.load(open(os.path.join(args.model, "config.json")))
words = json.load(open(os.path.join(args.model, "vocab.json")))
dev = torch.device("cuda")
log.info("model=%s architecture=%s hidden=%d vocab=%d dtype=float16 tie_word_embeddings=%s", args.model,
         cfg["architectures"][0], cfg["hidden_size"], cfg["vocab_size"], cfg.get("tie_word_embeddings", False))
log.info("device %s, torch %s", torch.cuda.get_device_name(), torch.__version__)


class StoryLM(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.norm = torch.nn.RMSNorm(c["hidden_size"], eps=c["rms_norm_eps"])
        self.lm_head = torch.nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        if c.get("tie_word_embeddings", False):
            self.lm_head.weight = self.embed_tokens.weight

    def forward(self, ids):
        return self.lm_head(self.norm(self.embed_tokens(ids[-1:])))


t0 = time.time()
model = StoryLM(cfg).to(dev, torch.float16).eval()
params = dict(model.named_parameters())
loaded, skipped = [], []
with safe_open(os.path.join(args.model, "model.safetensors"), framework="pt", device="cuda") as f:
    for name in f.keys():
        key = name.removeprefix("model.")
        if key == "lm_head.weight" and cfg.get("tie_word_embeddings", False):
            skipped.append(name)
            continue
        params[key].data.copy_(f.get_tensor(name))
        loaded.append(name)
llog.info("Loaded %d tensors from model.safetensors (skipped %d: %s) in %.2fs", len(loaded), len(skipped),
          ", ".join(skipped) or "-", time.time() - t0)


@torch.inference_mode()
def complete(prompt, max_tokens):
    ids = [words.index(w) for w in prompt.split()]
    out = []
    for _ in range(max_tokens):
        nxt = int(model(torch.tensor(ids, device=dev)).argmax(-1))
        if nxt == cfg["eos_token_id"]:
            break
        ids.append(nxt)
        out.append(words[nxt])
    return out


api.info("Application startup complete. Uvicorn running on http://0.0.0.0:%d", args.port)
for i, prompt in enumerate(["once upon a", "my favourite recipe needs", "our robot opened"]):
    rid = f"cmpl-{i}"
    api.info('POST /v1/completions %s {"prompt": "%s", "max_tokens": %d, "temperature": 0}', rid, prompt,
             args.max_tokens)
    t0 = time.time()
    out = complete(prompt, args.max_tokens)
    api.info("%s: %d tokens in %.3fs, finish_reason=%s", rid, len(out), time.time() - t0,
             "length" if len(out) == args.max_tokens else "stop")
    print(json.dumps({"id": rid, "object": "text_completion", "model": os.path.basename(args.model),
                      "choices": [{"index": 0, "text": " " + " ".join(out), "finish_reason":
                                   "length" if len(out) == args.max_tokens else "stop"}]}))
