"""An engine that quantizes a bf16 checkpoint to NVFP4 while loading it (--quantization nvfp4, online): the FP4 packing
kernel is JIT-compiled with nvcc for the running GPU on first use and cached, as flashinfer-style JIT modules are."""
import argparse, hashlib, os, subprocess, sys, time
import torch
import common

log = common.log("engine")
ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Llama-3.1-8B-Instruct")
ap.add_argument("--quantization", default="nvfp4")
ap.add_argument("--jit-cache", default=os.path.expanduser("~/.cache/engine/jit"))
args = ap.parse_args()

major, minor = torch.cuda.get_device_capability()
log.info("engine 0.4.2 | torch %s | CUDA %s | %s (sm_%d%d)", torch.__version__, torch.version.cuda,
         torch.cuda.get_device_name(), major, minor)
log.info("server_args: model=%s, quantization=%s, dtype=bfloat16, kv_cache_dtype=auto, tp_size=1", args.model,
         args.quantization)
log.info("Quantization %s: weights are quantized on load (per-16 block scales in e4m3, global scale fp32)", args.quantization)

FP4_SRC = r'''
#include <cuda_bf16.h>
#include <cuda_fp8.h>
// 16 bf16 values -> 8 bytes of packed e2m1 + one e4m3 block scale
extern "C" __global__ void cvt_bf16_to_nvfp4(const __nv_bfloat16* __restrict__ in, unsigned char* __restrict__ out,
                                             __nv_fp8_e4m3* __restrict__ scales, float global_scale, long n) {
  long blk = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (blk * 16 >= n) return;
  const __nv_bfloat16* x = in + blk * 16;
  float amax = 0.f;
  for (int i = 0; i < 16; ++i) amax = fmaxf(amax, fabsf(__bfloat162float(x[i])));
  float s = amax / 6.0f * global_scale;
  __nv_fp8_e4m3 s8(s);
  scales[blk] = s8;
  float inv = s > 0.f ? 1.0f / (float(s8) / global_scale) : 0.f;
  for (int i = 0; i < 16; i += 2) {
    float a = __bfloat162float(x[i]) * inv, b = __bfloat162float(x[i + 1]) * inv;
    unsigned short packed;
    asm volatile("{\n.reg .b8 r;\ncvt.rn.satfinite.e2m1x2.f32 r, %2, %1;\nmov.b16 %0, {r, 0};\n}"
                 : "=h"(packed) : "f"(a), "f"(b));
    out[blk * 8 + i / 2] = (unsigned char)packed;
  }
}
'''


class JitModule:
    def __init__(self, name, src):
        self.name, self.src = name, src
        arch = f"sm_{major}{minor}a" if major >= 9 else f"sm_{major}{minor}"
        key = hashlib.sha1((src + arch).encode()).hexdigest()[:10]
        self.dir = os.path.join(args.jit_cache, f"{name}_{arch}_{key}")
        self.arch = arch

    def build(self):
        cubin = os.path.join(self.dir, self.name + ".cubin")
        if os.path.exists(cubin):
            return cubin
        os.makedirs(self.dir, exist_ok=True)
        cu = os.path.join(self.dir, self.name + ".cu")
        open(cu, "w").write(self.src)
        cmd = ["nvcc", "-cubin", "-O3", "-std=c++17", f"-arch={self.arch}", "-o", cubin, cu]
        log.info("Building JIT module %s: %s", self.name, " ".join(cmd))
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"Error building JIT module '{self.name}' (exit status {p.returncode}):\n{p.stdout}{p.stderr}")
        log.info("Finished building JIT module %s in %.1fs", self.name, time.time() - t0)
        return cubin


class NVFP4Linear(torch.nn.Module):
    jit = JitModule("fp4_quantization", FP4_SRC)

    def __init__(self, name, out_f, in_f):
        super().__init__()
        self.name = name
        self.weight = torch.nn.Parameter(torch.empty(out_f, in_f, dtype=torch.bfloat16, device="cuda"), requires_grad=False)

    def process_weights_after_loading(self):
        cubin = self.jit.build()
        import cupy as cp
        mod = cp.RawModule(path=cubin)
        fn = mod.get_function("cvt_bf16_to_nvfp4")
        n = self.weight.numel()
        packed = torch.empty(n // 2, dtype=torch.uint8, device="cuda")
        scales = torch.empty(n // 16, dtype=torch.uint8, device="cuda")
        gs = float(448.0 * 6.0 / self.weight.abs().max().float().item())
        fn(((n // 16 + 255) // 256,), (256,), (cp.asarray(self.weight.view(torch.int16)), cp.asarray(packed),
                                               cp.asarray(scales), cp.float32(gs), cp.int64(n)))
        self.weight_packed, self.weight_scale = packed, scales
        del self.weight


hidden, inter, layers = 4096, 14336, 4
log.info("Load weight begin. avail mem=%.2f GiB", torch.cuda.mem_get_info()[0] / 2**30)
mods = []
for i in range(layers):
    for nm, o, ii in [("qkv_proj", 6144, hidden), ("o_proj", hidden, hidden), ("gate_up_proj", 2 * inter, hidden),
                      ("down_proj", hidden, inter)]:
        m = NVFP4Linear(f"model.layers.{i}.{nm}", o, ii)
        m.weight.normal_(0, 0.02)
        mods.append(m)
log.info("Loading safetensors checkpoint shards: 100%% | 4/4 [00:01<00:00]")
log.info("Quantizing %d linear layers to %s", len(mods), args.quantization)
t0 = time.time()
for m in mods:
    m.process_weights_after_loading()
torch.cuda.synchronize()
log.info("Load weight end. quantized in %.1fs, avail mem=%.2f GiB", time.time() - t0, torch.cuda.mem_get_info()[0] / 2**30)
log.info("The server is fired up and ready to roll!")
