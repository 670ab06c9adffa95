"""Streaming generation: token ids go to a native detokenizer thread (detok_native, pybind11) while the GPU decodes.
The model's embedding and LM head are padded to a multiple of 64 rows; the tokenizer's vocab file has 32000 entries."""
import sys, time, torch, common
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/tmp/h4")
import detok_native
log = common.log("engine")

vocab_file = "/tmp/h4/vocab-32000.txt"
with open(vocab_file, "w") as f:
    f.write("\n".join(["<unk>", "<s>", "</s>"] + [f"▁tok{i}" for i in range(3, 32000)]) + "\n")
detok = detok_native.Detokenizer(vocab_file)
padded_vocab, hidden, layers, batch = 32064, 1024, 4, 8
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
log.info("tokenizer vocab %d, model vocab_size %d (padded to a multiple of 64)", detok.vocab_size(), padded_vocab)
torch.manual_seed(0)
emb = torch.randn(padded_vocab, hidden, device="cuda", dtype=torch.bfloat16)
ws = [torch.randn(hidden, hidden, device="cuda", dtype=torch.bfloat16) * 0.03 for _ in range(layers)]
lm_head = torch.randn(hidden, padded_vocab, device="cuda", dtype=torch.bfloat16) * 0.001
log.info("Load weight end. mem usage=%.2f GB", torch.cuda.memory_allocated() / 1e9)


def step(ids):
    h = emb[ids]
    for w in ws:
        h = h + torch.tanh(h @ w)
    probs = torch.softmax((h[:, -1] @ lm_head).float() / 0.8, -1)
    return torch.multinomial(probs, 1)


ids = torch.randint(3, 32000, (batch, 64), device="cuda")
log.info("Prefill batch. #new-seq: %d, #new-token: %d, #running-req: 0", batch, ids.numel())
tok = step(ids)
for s, t in enumerate(tok[:, 0].tolist()):
    detok.submit(s, [t])
ids = torch.cat([ids, tok], 1)
t0 = time.time()
for i in range(1, 512):
    tok = step(ids)
    ids = torch.cat([ids, tok], 1)
    for s, t in enumerate(tok[:, 0].tolist()):
        detok.submit(s, [t])
    if i % 16 == 0:
        log.info("Decode batch. #running-req: %d, #token: %d, gen throughput (token/s): %.2f", batch, ids.numel(),
                 batch * i / (time.time() - t0))
        time.sleep(0.05)
time.sleep(0.5)
log.info("stream 0: %s", detok.texts()[0][:120])
