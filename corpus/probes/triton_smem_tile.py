"""A Triton GEMM launched with a tile config (128x128x128, 5 stages) whose pipelined tiles need more shared memory than an SM has."""
import torch, triton, triton.language as tl, common
log = common.log("engine")


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def gemm(a, b, cfg):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, cfg["BLOCK_M"]), triton.cdiv(N, cfg["BLOCK_N"]))
    gemm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                      BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
                      num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return c


log.info("torch %s, triton %s on %s", torch.__version__, triton.__version__, torch.cuda.get_device_name())
hidden, inter = 4096, 14336
log.info("Loading weights: 1 decoder layer, hidden=%d intermediate=%d dtype=float16", hidden, inter)
w_up = torch.randn(hidden, inter, device="cuda", dtype=torch.float16) * 0.02
w_down = torch.randn(inter, hidden, device="cuda", dtype=torch.float16) * 0.02
log.info("Load weight end. mem usage=%.2f GB", torch.cuda.memory_allocated() / 1e9)
cfg = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "num_warps": 8, "num_stages": 5}
log.info("Using tuned GEMM config for N=%d,K=%d: %s", inter, hidden, cfg)
log.info("Warming up the model (max_num_batched_tokens=2048)")
x = torch.randn(2048, hidden, device="cuda", dtype=torch.float16)
h = gemm(x, w_up, cfg)
y = gemm(torch.nn.functional.silu(h), w_down, cfg)
torch.cuda.synchronize()
log.info("Warm-up done, |y|=%.3f", y.float().abs().mean().item())
