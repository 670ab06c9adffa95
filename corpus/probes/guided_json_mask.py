"""Structured output (response_format=json_schema): a grammar compiled over the tokenizer's vocabulary gives, at every
step, a bitmask of the tokens the JSON schema allows, which the sampler applies to the model's logits."""
import argparse, json, re, time
import torch
import torch.nn.functional as F
import common

log = common.log("engine")
ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Phi-3-mini-4k-instruct")
ap.add_argument("--guided-decoding-backend", default="xgrammar")
args = ap.parse_args()

# the checkpoint's embedding / lm_head are padded to a multiple of 64; the tokenizer has 32000 pieces + 11 added tokens
VOCAB_MODEL, VOCAB_TOK, HID, LAYERS = 32064, 32011, 3072, 4
pieces = ["<unk>", "<s>", "</s>"] + [chr(c) for c in range(32, 127)] + [f"\u2581w{i}" for i in range(32000 - 98)]
pieces += ["<|endoftext|>", "<|assistant|>", "<|placeholder1|>", "<|placeholder2|>", "<|placeholder3|>",
           "<|placeholder4|>", "<|system|>", "<|end|>", "<|placeholder5|>", "<|placeholder6|>", "<|user|>"]
assert len(pieces) == VOCAB_TOK
log.info("model=%s dtype=bfloat16 max_model_len=4096 guided_decoding_backend=%s", args.model, args.guided_decoding_backend)
log.info("tokenizer: LlamaTokenizerFast, vocab_size=%d (with added tokens)", len(pieces))
torch.manual_seed(0)
W = {"embed": torch.randn(VOCAB_MODEL, HID, device="cuda", dtype=torch.bfloat16) * 0.02,
     "lm_head": torch.randn(VOCAB_MODEL, HID, device="cuda", dtype=torch.bfloat16) * 0.02}
for l in range(LAYERS):
    W[f"{l}.mlp"] = torch.randn(HID, HID, device="cuda", dtype=torch.bfloat16) * 0.02
log.info("Loading model weights took %.2f GB; lm_head: [%d, %d]", sum(t.numel() * 2 for t in W.values()) / 1e9,
         VOCAB_MODEL, HID)


class JsonGrammar:
    """A token-level matcher for a JSON object: allows the characters that can continue the document."""
    def __init__(self, schema, vocab):
        self.schema, self.vocab, self.state = schema, vocab, "start"
        self.allowed = {"start": set("{ "), "body": set('"abcdefghijklmnopqrstuvwxyz:, 0123456789}')}
        t0 = time.time()
        self.masks = {}
        for st, chars in self.allowed.items():
            m = torch.zeros((VOCAB_TOK + 31) // 32, dtype=torch.int32)
            for i, p in enumerate(vocab):
                if len(p) == 1 and p in chars:
                    m[i // 32] |= (1 << (i % 32)) if (i % 32) < 31 else -(1 << 31)
            self.masks[st] = m
        log.info("compiled grammar for schema %s over %d tokens in %.2fs", json.dumps(schema), len(vocab), time.time() - t0)

    def fill_next_token_bitmask(self):
        return self.masks[self.state].cuda()

    def accept(self, tok):
        self.state = "body"


def apply_token_bitmask(logits, bitmask):
    bits = torch.arange(32, device=bitmask.device, dtype=torch.int32)
    allowed = ((bitmask.unsqueeze(-1) >> bits) & 1).bool().flatten()[:VOCAB_TOK]
    return logits.masked_fill(~allowed.unsqueeze(0), float("-inf"))


def forward(ids):
    x = W["embed"][ids]
    for l in range(LAYERS):
        x = x + F.gelu(x @ W[f"{l}.mlp"])
    return (x[-1:] @ W["lm_head"].t()).float()


def run(rid, prompt_len, max_tokens, grammar=None):
    ids = torch.randint(100, 32000, (prompt_len,), device="cuda")
    out = []
    for step in range(max_tokens):
        logits = forward(ids)
        if grammar is not None:
            logits = apply_token_bitmask(logits, grammar.fill_next_token_bitmask())
        tok = int(logits.argmax(-1).item())
        if grammar is not None:
            grammar.accept(tok)
        out.append(tok)
        ids = torch.cat([ids, torch.tensor([tok], device="cuda")])
    return out


log.info("warming up: 1 request, 16 prompt tokens, 4 output tokens (unconstrained)")
run("warmup", 16, 4)
log.info("Application startup complete.")
schema = {"type": "object", "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
          "required": ["city", "population"]}
rid = "chatcmpl-7f3a"
log.info('POST /v1/chat/completions %s: prompt_tokens=57, max_tokens=64, response_format={"type": "json_schema"}', rid)
g = JsonGrammar(schema, pieces)
toks = run(rid, 57, 64, grammar=g)
log.info("%s: %d tokens", rid, len(toks))
