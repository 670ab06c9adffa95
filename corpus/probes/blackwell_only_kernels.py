"""A serving engine whose fused MoE / FP4 GEMM kernels come prebuilt in the wheel (kernels/*.fatbin). The wheel was built
with TORCH_CUDA_ARCH_LIST="10.0a;12.0a" only; the engine loads the module on the warm-up batch."""
import argparse, os, time
import torch, cupy
import common

p = argparse.ArgumentParser()
p.add_argument("--model", default="Qwen3-30B-A3B-FP4")
p.add_argument("--kernel-dir", required=True)
args = p.parse_args()
log = common.log("engine")
kl = common.log("kernels")
major, minor = torch.cuda.get_device_capability()
log.info("torch %s, cupy %s, device %s (sm_%d%d), driver %d", torch.__version__, cupy.__version__,
         torch.cuda.get_device_name(), major, minor, cupy.cuda.runtime.driverGetVersion())
log.info("engine args: model=%s quantization=modelopt_fp4 moe_backend=fused_fp4 tensor_parallel_size=1", args.model)
log.info("loading weights: 48 layers, 128 experts, packed fp4 with fp8 block scales ... done (16.2 GiB)")
buf = torch.empty(int(16.2 * 2**30) // 64, dtype=torch.uint8, device="cuda")
log.info("KV cache: 62344 tokens")
kl.info("kernel package: %s", ", ".join(sorted(os.listdir(args.kernel_dir))))
log.info("warm-up: batch of 8 x 128 tokens")
t0 = time.time()
mod = cupy.RawModule(path=os.path.join(args.kernel_dir, "fused_moe_fp4.fatbin"))
kl.info("loaded fused_moe_fp4.fatbin")
fn = mod.get_function("fused_moe_fp4_gemm")
x = cupy.zeros(8 * 128 * 2048, dtype=cupy.float16)
fn((64,), (128,), (x, cupy.int32(x.size)))
cupy.cuda.Device().synchronize()
log.info("warm-up done in %.2fs", time.time() - t0)
