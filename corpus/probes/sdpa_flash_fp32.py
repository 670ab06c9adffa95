"""The server forces the flash attention backend while the model runs in float32 (--dtype float32): no SDPA kernel accepts it."""
import argparse, torch, common
from torch.nn.attention import sdpa_kernel, SDPBackend
ap = argparse.ArgumentParser()
ap.add_argument("--dtype", default="float32")
ap.add_argument("--attention-backend", default="flash")
args = ap.parse_args()
log = common.log("engine")
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
log.info("server args: dtype=%s attention_backend=%s max_num_seqs=8", args.dtype, args.attention_backend)
dtype = getattr(torch, args.dtype)
backend = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}[args.attention_backend]
heads, hd, d = 16, 64, 1024
qkv = torch.nn.Linear(d, 3 * d, bias=False).cuda().to(dtype)
o = torch.nn.Linear(d, d, bias=False).cuda().to(dtype)
log.info("Load weight end. dtype=%s, mem usage=%.2f GB", dtype, torch.cuda.memory_allocated() / 1e9)


def attn(x):
    b, t, _ = x.shape
    q, k, v = qkv(x).view(b, t, 3, heads, hd).permute(2, 0, 3, 1, 4)
    with sdpa_kernel([backend]):
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    return o(y.transpose(1, 2).reshape(b, t, d))


log.info("Warming up: dummy request, 1 x 256 tokens")
with torch.no_grad():
    y = attn(torch.randn(1, 256, d, device="cuda", dtype=dtype))
torch.cuda.synchronize()
log.info("Warm-up done. The server is ready.")
