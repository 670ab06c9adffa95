"""A torch serving engine that compiles its decode step with torch.compile(fullgraph=True) and warms it up for every
CUDA-graph batch size before it serves. The attention metadata builder hands the per-sequence lengths to the compiled
step as a plain Python list (seq_lens), as the scheduler produces it."""
import argparse, time
import torch
import torch.nn.functional as F
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Llama-3.2-1B-Instruct")
ap.add_argument("--max-num-seqs", type=int, default=64)
ap.add_argument("--max-model-len", type=int, default=2048)
args = ap.parse_args()
log = common.log("engine")
clog = common.log("compilation")

D, NH, HD, FF, NL, V = 2048, 32, 64, 8192, 2, 128256
dev, dt = torch.device("cuda"), torch.bfloat16
log.info("torch %s, device %s", torch.__version__, torch.cuda.get_device_name())
log.info("model=%s dtype=%s max_num_seqs=%d max_model_len=%d compilation_config={'level': 3, 'fullgraph': True, "
         "'cudagraph_capture_sizes': [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]}", args.model, dt, args.max_num_seqs,
         args.max_model_len)


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = torch.nn.RMSNorm(D)
        self.qkv = torch.nn.Linear(D, 3 * D, bias=False)
        self.o = torch.nn.Linear(D, D, bias=False)
        self.norm2 = torch.nn.RMSNorm(D)
        self.up = torch.nn.Linear(D, 2 * FF, bias=False)
        self.down = torch.nn.Linear(FF, D, bias=False)

    def forward(self, x, k_cache, v_cache, mask):
        b = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(b, 3, NH, HD).unbind(1)
        s = torch.einsum("bhd,bthd->bht", q, k_cache) * HD ** -0.5
        s = s.masked_fill(~mask[:, None, :], float("-inf"))
        a = torch.einsum("bht,bthd->bhd", s.softmax(-1).to(v_cache.dtype), v_cache).reshape(b, D)
        x = x + self.o(a)
        g, u = self.up(self.norm2(x)).chunk(2, -1)
        return x + self.down(F.silu(g) * u)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(V, D)
        self.layers = torch.nn.ModuleList(Layer() for _ in range(NL))
        self.norm = torch.nn.RMSNorm(D)
        self.lm_head = torch.nn.Linear(D, V, bias=False)

    def decode_step(self, input_ids, k_caches, v_caches, seq_lens):
        lens = torch.tensor(seq_lens, device=input_ids.device)
        mask = torch.arange(k_caches[0].shape[1], device=input_ids.device)[None, :] < lens[:, None]
        x = self.embed(input_ids)
        for layer, kc, vc in zip(self.layers, k_caches, v_caches):
            x = layer(x, kc, vc, mask)
        return self.lm_head(self.norm(x)).argmax(-1)


t0 = time.time()
with torch.device(dev):
    model = Model().to(dt).eval()
log.info("Loading weights took %.2f seconds (%.2f GiB)", time.time() - t0, torch.cuda.memory_allocated() / 2**30)
T = 256
k_caches = [torch.randn(args.max_num_seqs, T, NH, HD, device=dev, dtype=dt) for _ in range(NL)]
v_caches = [torch.randn(args.max_num_seqs, T, NH, HD, device=dev, dtype=dt) for _ in range(NL)]
log.info("KV cache: %d slots x %d tokens per layer", args.max_num_seqs, T)

step = torch.compile(model.decode_step, fullgraph=True)
clog.info("torch.compile(decode_step, fullgraph=True, backend='inductor')")
sizes = [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]
t_all = time.time()
with torch.inference_mode():
    for i, bs in enumerate(sizes):
        t0 = time.time()
        ids = torch.randint(0, V, (bs,), device=dev)
        seq_lens = [1 + (7 * j) % (T - 1) for j in range(bs)]
        out = step(ids, [k[:bs] for k in k_caches], [v[:bs] for v in v_caches], seq_lens)
        torch.cuda.synchronize()
        clog.info("Compiled/warmed decode step for batch size %d (%d/%d) in %.2f s", bs, i + 1, len(sizes),
                  time.time() - t0)
clog.info("torch.compile takes %.2f s in total", time.time() - t_all)
log.info("Application startup complete.")
