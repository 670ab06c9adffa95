"""An embedding server for a BERT-style encoder (bge-large class: 24 layers, hidden 1024, 16 heads) with the team's
fast path: the attention of each layer is torch's scaled_dot_product_attention, and the tokenizer's attention mask
(1 = token, 0 = padding) is broadcast to [batch, 1, 1, seq] and passed as attn_mask when a batch needs padding."""
import argparse, time, zlib

import torch
import torch.nn as nn
import torch.nn.functional as F

import common

log = common.log("embed-server")


class Layer(nn.Module):
    def __init__(self, d, h, ff):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = self.ln1(x + self.o(a.transpose(1, 2).reshape(b, s, d)))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class Encoder(nn.Module):
    def __init__(self, vocab=30522, d=1024, h=16, ff=4096, layers=24, max_pos=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList(Layer(d, h, ff) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        s = input_ids.size(1)
        x = self.ln(self.tok(input_ids) + self.pos(torch.arange(s, device=input_ids.device)))
        # only padded batches need a mask; unpadded ones take the fast path with no mask at all
        mask = None if bool(attention_mask.all()) else attention_mask[:, None, None, :]
        for layer in self.layers:
            x = layer(x, mask)
        emb = (x * attention_mask[..., None]).sum(1) / attention_mask.sum(1, keepdim=True)
        return F.normalize(emb, dim=-1)


def tokenize(texts, device):
    ids = [[101] + [1000 + (zlib.crc32(w.encode()) % 28000) for w in t.lower().split()] + [102] for t in texts]
    width = max(map(len, ids))
    input_ids = torch.zeros(len(ids), width, dtype=torch.long)
    attn = torch.zeros(len(ids), width, dtype=torch.long)
    for i, s in enumerate(ids):
        input_ids[i, :len(s)] = torch.tensor(s)
        attn[i, :len(s)] = 1
    return input_ids.to(device), attn.to(device)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bge-large-en-v1.5")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--max-batch", type=int, default=32)
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    log.info("torch %s, %s, sdpa backends: flash=%s mem_efficient=%s math=%s", torch.__version__,
             torch.cuda.get_device_name(), torch.backends.cuda.flash_sdp_enabled(),
             torch.backends.cuda.mem_efficient_sdp_enabled(), torch.backends.cuda.math_sdp_enabled())
    torch.manual_seed(0)
    model = Encoder().to("cuda", dtype).eval()
    log.info("loaded %s: %.0fM params, dtype=%s", args.model, sum(p.numel() for p in model.parameters()) / 1e6, dtype)
    with torch.inference_mode():
        ids, attn = tokenize(["warm up the encoder with one sentence of text"], "cuda")
        model(ids, attn)
        torch.cuda.synchronize()
    log.info("warm-up done (1 x %d tokens)", ids.size(1))
    log.info("Uvicorn running on http://0.0.0.0:8080 (POST /embed)")
    docs = ["The Eiffel Tower is in Paris .", "Transformers use attention to mix information across tokens .",
            "A short one .", "Embedding models map text to vectors that can be compared with cosine similarity .",
            "GPUs run many threads in parallel ."]
    log.info("POST /embed: batch of %d inputs", len(docs))
    t0 = time.time()
    with torch.inference_mode():
        ids, attn = tokenize(docs, "cuda")
        emb = model(ids, attn)
    log.info("embedded %d inputs (%s) in %.3fs", emb.size(0), tuple(emb.shape), time.time() - t0)


if __name__ == "__main__":
    main()
