"""Decode loop whose sampler runs in a small C library (libfastsample.so) through ctypes, on the host copy of the logits."""
import ctypes, faulthandler, os, sys, time, torch, common
faulthandler.enable()
log = common.log("engine")


class SamplingParams(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_float), ("repetition_penalty", ctypes.c_float), ("n_bad_words", ctypes.c_int32),
                ("bad_words", ctypes.POINTER(ctypes.c_int32))]


lib_path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h4/libfastsample.so"
lib = ctypes.CDLL(lib_path)
lib.penalize_and_argmax.restype = ctypes.c_int32
lib.penalize_and_argmax.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_int32, ctypes.POINTER(ctypes.c_int32),
                                    ctypes.c_int32, ctypes.POINTER(SamplingParams)]
log.info("torch %s on %s; native sampler %s", torch.__version__, torch.cuda.get_device_name(), lib_path)
hidden, vocab, layers = 2048, 32000, 4
torch.manual_seed(0)
ws = [torch.randn(hidden, hidden, device="cuda", dtype=torch.bfloat16) * 0.03 for _ in range(layers)]
emb = torch.randn(vocab, hidden, device="cuda", dtype=torch.bfloat16)
lm_head = torch.randn(hidden, vocab, device="cuda", dtype=torch.bfloat16) * 0.03
log.info("Load weight end. layers=%d hidden=%d vocab=%d mem usage=%.2f GB", layers, hidden, vocab, torch.cuda.memory_allocated() / 1e9)


def forward(ids):
    h = emb[ids]
    for w in ws:
        h = h + torch.nn.functional.gelu(h @ w)
    return (h[:, -1] @ lm_head).float()


def sample(logits_row, prev, params):
    buf = logits_row.contiguous().cpu()
    prev_arr = (ctypes.c_int32 * max(len(prev), 1))(*prev)
    return lib.penalize_and_argmax(ctypes.cast(buf.data_ptr(), ctypes.POINTER(ctypes.c_float)), vocab, prev_arr, len(prev),
                                   ctypes.byref(params))


requests = [{"id": "chatcmpl-1", "prompt_len": 96, "repetition_penalty": 1.1, "bad_words": [13, 29871]},
            {"id": "chatcmpl-2", "prompt_len": 40, "repetition_penalty": 1.05, "bad_words": None}]
log.info("The server is fired up and ready to roll!")
for r in requests:
    bw = r["bad_words"]
    params = SamplingParams(1.0, r["repetition_penalty"], len(bw) if bw else 0,
                            (ctypes.c_int32 * (len(bw) + 1))(*bw, -1) if bw else None)
    ids = torch.randint(0, vocab, (1, r["prompt_len"]), device="cuda")
    log.info("Prefill batch. #new-seq: 1, #new-token: %d, request %s", r["prompt_len"], r["id"])
    out = []
    t0 = time.time()
    for step in range(24):
        tok = sample(forward(ids)[0], out, params)
        out.append(tok)
        ids = torch.cat([ids, torch.tensor([[tok]], device="cuda")], 1)
        if step % 8 == 0:
            log.info("Decode batch. #running-req: 1, #token: %d, gen throughput (token/s): %.2f", ids.shape[1],
                     (step + 1) / (time.time() - t0))
    log.info("Finish request %s: %d tokens", r["id"], len(out))
