"""Eager attention over a 96k-token prompt materialises the full score matrix: OOM in prefill."""
import torch, common
log = common.log("engine")
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
heads, dim = 32, 128
log.info("model loaded: layers=1 heads=%d head_dim=%d attn_implementation=eager", heads, dim)
for n in [4096, 32768, 98304]:
    log.info("request: prompt_len=%d max_new_tokens=16", n)
    q = torch.randn(1, heads, n, dim, device="cuda", dtype=torch.bfloat16)
    k = torch.randn_like(q)
    log.info("prefill: %d tokens", n)
    scores = torch.matmul(q, k.transpose(-1, -2)) / dim ** 0.5
    probs = torch.softmax(scores.float(), -1)
    log.info("prefill done: %d tokens", n)
    del q, k, scores, probs
