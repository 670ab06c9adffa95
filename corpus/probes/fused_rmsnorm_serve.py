"""A torch serving engine with its own Triton kernels (fused residual-add + RMSNorm), deployed from a serving folder
(h8_setup.py copies it there as serve.py and runs it from that folder)."""
import argparse, os, sys, time
import torch
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Llama-3.1-8B-Instruct")
ap.add_argument("--port", type=int, default=8000)
ap.add_argument("--max-model-len", type=int, default=8192)
args = ap.parse_args()
log = common.log("engine")
log.info("starting engine: model=%s dtype=bfloat16 max_model_len=%d port=%d", args.model, args.max_model_len, args.port)
log.info("python %s, torch %s (CUDA %s), cwd %s", sys.version.split()[0], torch.__version__, torch.version.cuda,
         os.getcwd())
log.info("device: %s, capability %s", torch.cuda.get_device_name(), torch.cuda.get_device_capability())
log.info("loading fused kernels")
import triton
import triton.language as tl


@triton.jit
def fused_add_rmsnorm_kernel(x_ptr, res_ptr, w_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + row * n_cols + offs, mask=mask, other=0.0).to(tl.float32)
    x = x + r
    tl.store(res_ptr + row * n_cols + offs, x.to(tl.bfloat16), mask=mask)
    var = tl.sum(x * x, axis=0) / n_cols
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(x_ptr + row * n_cols + offs, (x * tl.rsqrt(var + eps) * w).to(tl.bfloat16), mask=mask)


def fused_add_rmsnorm(x, res, w, eps=1e-5):
    fused_add_rmsnorm_kernel[(x.shape[0],)](x, res, w, x.shape[1], eps, BLOCK=triton.next_power_of_2(x.shape[1]))
    return x, res


log.info("triton %s kernels ready", triton.__version__)
H = 4096
w = torch.ones(H, device="cuda", dtype=torch.bfloat16)
x = torch.randn(16, H, device="cuda", dtype=torch.bfloat16)
res = torch.zeros_like(x)
t0 = time.time()
fused_add_rmsnorm(x, res, w)
torch.cuda.synchronize()
log.info("kernel warm-up took %.2fs", time.time() - t0)
log.info("Uvicorn running on http://0.0.0.0:%d", args.port)
