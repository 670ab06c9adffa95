"""A small torch serving engine that tokenizes with a native library (libfasttok, a greedy longest-match tokenizer in C)
called through ctypes. The weights go to the GPU first; the tokenizer is opened next and first used by the engine's own
warm-up request."""
import argparse, ctypes, faulthandler, json, os, sys, time
import torch
import common

faulthandler.enable()
ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h8/fasttok-model")
ap.add_argument("--max-model-len", type=int, default=4096)
args = ap.parse_args()
log = common.log("engine")
tok_log = common.log("tokenizer")

cfg = json.load(open(os.path.join(args.model, "config.json")))
log.info("torch %s, CUDA %s, device %s", torch.__version__, torch.version.cuda, torch.cuda.get_device_name())
log.info("model config: %s", json.dumps(cfg))


class FastTokenizer:
    """ctypes wrapper around libfasttok.so"""

    def __init__(self, lib_path, vocab_path):
        self.lib = ctypes.CDLL(lib_path)
        self.lib.ft_encode.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        self.lib.ft_encode.restype = ctypes.c_int
        self.handle = self.lib.ft_load(vocab_path.encode())
        if not self.handle:
            raise RuntimeError(f"libfasttok: cannot load {vocab_path}")
        with open(vocab_path, encoding="utf-8") as f:
            self.vocab = [line.rstrip("\n") for line in f]

    def encode(self, text, max_tokens=8192):
        buf = (ctypes.c_int * max_tokens)()
        n = self.lib.ft_encode(self.handle, text.encode("utf-8"), buf, max_tokens)
        return list(buf[:n])

    def decode(self, ids):
        return "".join(self.vocab[i] for i in ids)


# weights
t0 = time.time()
V, H, L = cfg["vocab_size"], cfg["hidden_size"], cfg["num_hidden_layers"]
torch.manual_seed(0)
embed = torch.randn(V, H, device="cuda", dtype=torch.bfloat16) * 0.02
layers = [torch.randn(H, H, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(L)]
lm_head = torch.randn(V, H, device="cuda", dtype=torch.bfloat16) * 0.02
torch.cuda.synchronize()
log.info("Loading weights took %.2f s; model weights take %.2f GiB", time.time() - t0,
         torch.cuda.memory_allocated() / 2**30)

lib = os.path.join(args.model, "libfasttok.so")
tok = FastTokenizer(lib, os.path.join(args.model, "vocab.txt"))
tok_log.info("libfasttok loaded from %s (%d pieces)", lib, len(tok.vocab))


def generate(prompt, max_new_tokens=8):
    ids = tok.encode(prompt)
    x = torch.tensor(ids, device="cuda")
    out = []
    for _ in range(max_new_tokens):
        h = embed[x]
        for w in layers:
            h = h + torch.tanh(h @ w)
        nxt = int((h[-1] @ lm_head.t()).argmax())
        out.append(nxt)
        x = torch.cat([x, torch.tensor([nxt], device="cuda")])
    return len(ids), tok.decode(out)


log.info("Warming up the engine with a dummy request")
n, text = generate("Hello, my name is", max_new_tokens=4)
log.info("warm-up done (%d prompt tokens)", n)
common.log("api_server").info("Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)")
