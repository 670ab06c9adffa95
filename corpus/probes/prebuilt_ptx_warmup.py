"""A serving engine whose fused kernels ship inside its wheel as PTX (one file per kernel, compute_90), loaded with the CUDA
driver API the first time a kernel is needed; the server's warm-up request is the first to need fused_add_rmsnorm."""
import argparse, glob, os, time
import cupy as cp
import torch
import torch.nn.functional as F
import common

log = common.log("engine")
ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Qwen2.5-7B-Instruct")
ap.add_argument("--kernel-dir", default="/tmp/h6/kernels")
args = ap.parse_args()

log.info("engine 1.2.0 (wheel built for CUDA 13.x, torch 2.11), torch %s, CUDA runtime %s, driver API %d",
         torch.__version__, torch.version.cuda, cp.cuda.runtime.driverGetVersion())
log.info("device: %s, compute capability %s", torch.cuda.get_device_name(), torch.cuda.get_device_capability())
log.info("prebuilt kernels: %s", ", ".join(sorted(os.path.basename(p) for p in glob.glob(os.path.join(args.kernel_dir, "*.ptx")))))


class FusedKernels:
    _mods = {}

    @classmethod
    def get(cls, name):
        if name not in cls._mods:
            path = os.path.join(args.kernel_dir, f"{name}.sm90.ptx")
            log.info("loading kernel module %s", path)
            cls._mods[name] = cp.RawModule(path=path)
        return cls._mods[name].get_function(name)


hidden, layers, vocab = 3584, 4, 32000
torch.manual_seed(0)
log.info("Load weight begin. avail mem=%.2f GiB", torch.cuda.mem_get_info()[0] / 2**30)
W = {"embed": torch.randn(vocab, hidden, device="cuda") * 0.02}
for l in range(layers):
    W[f"{l}.mlp"] = torch.randn(hidden, hidden, device="cuda") * 0.02
    W[f"{l}.norm"] = torch.ones(hidden, device="cuda")
log.info("Load weight end. mem usage=%.2f GB", sum(t.numel() * 4 for t in W.values()) / 1e9)
log.info("KV cache: 120000 tokens, max_num_seqs=64, cuda_graph=False")


def forward(ids):
    x = W["embed"][ids].contiguous()
    res = torch.zeros_like(x)
    for l in range(layers):
        fn = FusedKernels.get("fused_add_rmsnorm")
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            fn((x.shape[0],), (256,), (cp.asarray(x), cp.asarray(res), cp.asarray(W[f"{l}.norm"]), cp.int32(hidden),
                                       cp.float32(1e-6)), shared_mem=256 * 4)
        x = F.silu(x @ W[f"{l}.mlp"])
    return (x[-1] @ W["embed"].t()).argmax().item()


log.info("Start warmup: 1 request, 32 prompt tokens, 1 output token")
t0 = time.time()
tok = forward(torch.randint(0, vocab, (32,), device="cuda"))
log.info("warmup done in %.2fs (token %d)", time.time() - t0, tok)
log.info("Application startup complete.")
