"""At warm-up the engine JIT-builds a fused rotary-embedding CUDA extension whose source still uses the THC API (removed from PyTorch in 1.11)."""
import os, torch, common
from torch.utils.cpp_extension import load_inline
log = common.log("engine")

CUDA_SRC = r"""
#include <torch/extension.h>
#include <THC/THC.h>
#include <cuda_runtime.h>

__global__ void rope_kernel(float* q, const float* cos, const float* sin, int heads, int dim) {
  int t = blockIdx.x, h = blockIdx.y, i = threadIdx.x;
  if (i >= dim / 2) return;
  float* row = q + ((size_t)t * heads + h) * dim;
  float x0 = row[i], x1 = row[i + dim / 2];
  float c = cos[t * (dim / 2) + i], s = sin[t * (dim / 2) + i];
  row[i] = x0 * c - x1 * s;
  row[i + dim / 2] = x0 * s + x1 * c;
}

torch::Tensor fused_rope(torch::Tensor q, torch::Tensor cos, torch::Tensor sin) {
  int T = q.size(0), H = q.size(1), D = q.size(2);
  rope_kernel<<<dim3(T, H), D / 2, 0, THCState_getCurrentStream(at::globalContext().getTHCState())>>>(
      q.data_ptr<float>(), cos.data_ptr<float>(), sin.data_ptr<float>(), H, D);
  THCudaCheck(cudaGetLastError());
  return q;
}
"""
CPP_SRC = "torch::Tensor fused_rope(torch::Tensor q, torch::Tensor cos, torch::Tensor sin);"

log.info("torch %s (CUDA %s) on %s", torch.__version__, torch.version.cuda, torch.cuda.get_device_name())
log.info("Loading model: layers=2 heads=16 head_dim=128 dtype=float32")
wq = torch.randn(2048, 2048, device="cuda") * 0.02
log.info("Load weight end. mem usage=%.2f GB", torch.cuda.memory_allocated() / 1e9)
log.info("Server warm-up: building custom kernels (fused_rope)")
ext = load_inline(name="fused_rope_v1", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions=["fused_rope"],
                  extra_cuda_cflags=["-O3"], verbose=False)
log.info("custom kernels ready")
x = torch.randn(64, 2048, device="cuda")
q = (x @ wq).view(64, 16, 128)
pos = torch.arange(64, device="cuda", dtype=torch.float32)[:, None]
inv = 1.0 / (10000 ** (torch.arange(0, 128, 2, device="cuda").float() / 128))
ext.fused_rope(q, torch.cos(pos * inv).contiguous(), torch.sin(pos * inv).contiguous())
torch.cuda.synchronize()
log.info("warm-up request done")
