"""A torch serving engine with a per-sequence (non-paged) KV cache, as in a Hugging Face-style generate loop: the prompt's
K/V is computed once in prefill, and a request with n > 1 samples gets its own copy of the prompt's K/V per sample
when decoding starts."""
import argparse, time
import torch
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Llama-3.1-8B-Instruct")
ap.add_argument("--max-model-len", type=int, default=131072)
args = ap.parse_args()
log = common.log("engine")
api = common.log("api_server")
L, H, KVH, D = 32, 4096, 8, 128
free, total = torch.cuda.mem_get_info()
log.info("torch %s, device %s (%.1f GiB, %.1f GiB free)", torch.__version__, torch.cuda.get_device_name(), total / 2**30,
         free / 2**30)
log.info("engine config: model=%s dtype=bfloat16 max_model_len=%d kv_cache=dynamic (per sequence) max_num_seqs=32",
         args.model, args.max_model_len)
t0 = time.time()
torch.manual_seed(0)
dev = "cuda"
def param(*shape):
    return torch.empty(*shape, device=dev, dtype=torch.bfloat16).normal_(0, 0.02)
embed = param(128256, H)
layers = [dict(wq=param(H, H), wk=param(KVH * D, H), wv=param(KVH * D, H), wo=param(H, H),
               w_up=param(2 * 14336, H), w_down=param(H, 14336)) for _ in range(L)]
lm_head = param(128256, H)
torch.cuda.synchronize()
log.info("Loading weights took %.2fs, %.2f GiB", time.time() - t0, torch.cuda.memory_allocated() / 2**30)
api.info("Uvicorn running on http://0.0.0.0:8000")


class Sequence:
    def __init__(self, rid, prompt_ids, n):
        self.rid, self.prompt_ids, self.n = rid, prompt_ids, n
        self.kv = None          # list of (k, v) per layer: [n_seq, KVH, T, D]


@torch.inference_mode()
def prefill(seq, chunk=8192):
    T = seq.prompt_ids.numel()
    ks = [torch.empty(1, KVH, T, D, device=dev, dtype=torch.bfloat16) for _ in range(L)]
    vs = [torch.empty(1, KVH, T, D, device=dev, dtype=torch.bfloat16) for _ in range(L)]
    for s in range(0, T, chunk):
        x = embed[seq.prompt_ids[s:s + chunk]]
        for i, ly in enumerate(layers):
            ks[i][0, :, s:s + chunk] = (x @ ly["wk"].t()).view(-1, KVH, D).transpose(0, 1)
            vs[i][0, :, s:s + chunk] = (x @ ly["wv"].t()).view(-1, KVH, D).transpose(0, 1)
    seq.kv = list(zip(ks, vs))
    return (x[-1:] @ lm_head.t()).float()


def fork_kv_for_samples(seq):
    # one copy of the prompt's K/V per sample, so every sample can append its own tokens
    seq.kv = [(k.repeat_interleave(seq.n, dim=0), v.repeat_interleave(seq.n, dim=0)) for k, v in seq.kv]


@torch.inference_mode()
def decode_step(seq, logits):
    if seq.kv[0][0].shape[0] != seq.n:
        fork_kv_for_samples(seq)
    probs = torch.softmax(logits, -1).expand(seq.n, -1)
    return torch.multinomial(probs, 1)


T, n = 65536, 16
api.info('127.0.0.1:53114 - "POST /v1/completions HTTP/1.1" 200 OK')
log.info("Received request cmpl-51f0: prompt: <%d tokens>, params: SamplingParams(n=%d, temperature=0.8, top_p=0.95, "
         "max_tokens=512)", T, n)
seq = Sequence("cmpl-51f0", torch.randint(0, 128256, (T,), device=dev), n)
t0 = time.time()
logits = prefill(seq)
torch.cuda.synchronize()
log.info("prefill %d tokens in %.2fs; KV cache %.2f GiB; GPU memory allocated %.2f GiB", T, time.time() - t0,
         sum(k.numel() + v.numel() for k, v in seq.kv) * 2 / 2**30, torch.cuda.memory_allocated() / 2**30)
for step in range(512):
    toks = decode_step(seq, logits)
    if step % 64 == 0:
        log.info("decode step %d: %d samples", step, seq.n)
