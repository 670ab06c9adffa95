"""A serving engine's own Triton decode-attention kernel, written and tuned for head_dim 128 models, meets a model with
head_dim 80 (hidden 2560 / 32 heads, Phi-2 style). The kernel is JIT-compiled on the warm-up request."""
import argparse, math, time
import torch, triton, triton.language as tl
import common


@triton.jit
def _decode_attn_kernel(Q, K, V, O, seq_len, sm_scale,
                        stride_qh, stride_kt, stride_kh, stride_oh,
                        HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    h = tl.program_id(0)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + h * stride_qh + offs_d).to(tl.float32)
    m_i = -float("inf")
    l_i = 0.0
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    for start in range(0, seq_len, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < seq_len
        k = tl.load(K + offs_n[:, None] * stride_kt + h * stride_kh + offs_d[None, :], mask=mask[:, None], other=0.0)
        s = tl.sum(k.to(tl.float32) * q[None, :], axis=1) * sm_scale
        s = tl.where(mask, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m_i - m_new)
        v = tl.load(V + offs_n[:, None] * stride_kt + h * stride_kh + offs_d[None, :], mask=mask[:, None], other=0.0)
        acc = acc * alpha + tl.sum(p[:, None] * v.to(tl.float32), axis=0)
        l_i = l_i * alpha + tl.sum(p, 0)
        m_i = m_new
    tl.store(O + h * stride_oh + offs_d, (acc / l_i).to(O.dtype.element_ty))


def decode_attention(q, k, v):
    heads, head_dim = q.shape
    o = torch.empty_like(q)
    _decode_attn_kernel[(heads,)](q, k, v, o, k.shape[0], 1.0 / math.sqrt(head_dim),
                                  q.stride(0), k.stride(0), k.stride(1), o.stride(0),
                                  HEAD_DIM=head_dim, BLOCK_N=64)
    return o


p = argparse.ArgumentParser()
p.add_argument("--model", default="microsoft/phi-2")
args = p.parse_args()
log = common.log("engine")
log.info("torch %s, triton %s, device %s", torch.__version__, triton.__version__, torch.cuda.get_device_name())
hidden, heads, layers = 2560, 32, 32
head_dim = hidden // heads
log.info("model config: %s hidden_size=%d num_attention_heads=%d head_dim=%d num_hidden_layers=%d", args.model, hidden,
         heads, head_dim, layers)
log.info("attention backend: TRITON_DECODE (custom), prefill backend: SDPA")
log.info("loading weights ... done (%d layers, 2.78B params, bfloat16)", layers)
k_cache = torch.randn(4096, heads, head_dim, device="cuda", dtype=torch.bfloat16)
v_cache = torch.randn_like(k_cache)
log.info("KV cache allocated: 4096 tokens x %d layers", layers)
log.info("warm-up: prefill 16 tokens + 4 decode steps")
t0 = time.time()
q = torch.randn(1, heads, 16, head_dim, device="cuda", dtype=torch.bfloat16)
torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
log.info("warm-up prefill ok")
for step in range(4):
    q1 = torch.randn(heads, head_dim, device="cuda", dtype=torch.bfloat16)
    out = decode_attention(q1, k_cache[:17 + step], v_cache[:17 + step])
torch.cuda.synchronize()
log.info("warm-up done in %.2fs", time.time() - t0)
