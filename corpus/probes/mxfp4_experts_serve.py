"""A serving engine loading an MoE checkpoint whose expert weights ship in MXFP4 (e2m1 values packed two per byte,
one e8m0 scale per 32 values, as gpt-oss publishes them). The 'native' MXFP4 backend keeps the experts packed and
runs each expert GEMM with torch._scaled_mm on MXFP4 activations and weights (block-wise 1x32 scaling); it is the
default whenever torch exposes float4_e2m1fn_x2."""
import argparse, time

import torch

import common

log = common.log("engine")


def ceil_div(a, b):
    return (a + b - 1) // b


def blocked_scale(rows, k, device):
    # e8m0 scales in cuBLAS' blocked (128 x 4) layout, flattened; 127 == 2**0
    n = ceil_div(rows, 128) * 128 * ceil_div(k // 32, 4) * 4
    return torch.full((n,), 127, dtype=torch.uint8, device=device).view(torch.float8_e8m0fnu)


class MXFP4Expert:
    def __init__(self, d, ff, device, g):
        # packed weights: [out, in/2] bytes, two e2m1 values per byte
        self.w_up = torch.randint(0, 256, (2 * ff, d // 2), dtype=torch.uint8, generator=g, device=device).view(
            torch.float4_e2m1fn_x2)
        self.w_down = torch.randint(0, 256, (d, ff // 2), dtype=torch.uint8, generator=g, device=device).view(
            torch.float4_e2m1fn_x2)
        self.s_up = blocked_scale(2 * ff, d, device)
        self.s_down = blocked_scale(d, ff, device)
        self.d, self.ff = d, ff

    def __call__(self, x_q, x_scale):
        # x_q: [tokens, d/2] packed MXFP4 activations
        return torch._scaled_mm(x_q, self.w_up.t(), x_scale, self.s_up, out_dtype=torch.bfloat16)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt-oss-20b")
    ap.add_argument("--moe-backend", default="auto")
    ap.add_argument("--max-num-batched-tokens", type=int, default=8192)
    args = ap.parse_args()
    dev = torch.device("cuda")
    cap = torch.cuda.get_device_capability()
    log.info("Initializing engine: model=%s, quantization=mxfp4, dtype=bfloat16, max_num_batched_tokens=%d",
             args.model, args.max_num_batched_tokens)
    log.info("torch %s (CUDA %s), device %s (sm_%d%d)", torch.__version__, torch.version.cuda,
             torch.cuda.get_device_name(), *cap)
    backend = args.moe_backend
    if backend == "auto":
        backend = "native_scaled_mm" if hasattr(torch, "float4_e2m1fn_x2") else "dequant_bf16"
    log.info("MXFP4 MoE backend: %s (torch.float4_e2m1fn_x2 available: %s)", backend, hasattr(torch, "float4_e2m1fn_x2"))
    d, ff, n_experts, layers = 2880, 2880, 32, 24
    g = torch.Generator(device=dev).manual_seed(0)
    t0 = time.time()
    experts = []
    for layer in range(layers):
        experts.append([MXFP4Expert(d + 64, ff + 64, dev, g) for _ in range(4)])  # padded to 128-multiples
        if layer % 6 == 5:
            log.info("loaded experts of layers 0-%d (%d x %d MXFP4 experts per layer, 4 resident in this probe)", layer,
                     n_experts, 2)
    log.info("weights loaded in %.1fs, %.2f GiB allocated", time.time() - t0, torch.cuda.memory_allocated() / 2**30)
    log.info("warm-up: dummy forward with %d tokens", 256)
    tokens, dd = 256, d + 64
    x_q = torch.randint(0, 256, (tokens, dd // 2), dtype=torch.uint8, device=dev).view(torch.float4_e2m1fn_x2)
    x_s = blocked_scale(tokens, dd, dev)
    out = experts[0][0](x_q, x_s)
    torch.cuda.synchronize()
    log.info("warm-up done: %s", tuple(out.shape))


if __name__ == "__main__":
    main()
