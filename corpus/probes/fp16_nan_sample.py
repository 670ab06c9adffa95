"""fp16 activations overflow to inf; softmax gives NaN; multinomial sampling asserts on the device."""
import torch, common
log = common.log("engine")
log.info("torch %s on %s, dtype=float16", torch.__version__, torch.cuda.get_device_name())
w = (torch.randn(4096, 4096, device="cuda") * 60).half()
head = (torch.randn(4096, 32000, device="cuda") * 60).half()
h = torch.randn(4, 4096, device="cuda").half()
log.info("request batch: 4 prompts, sampling temperature=0.7 top_p=0.9")
for step in range(8):
    h = torch.nn.functional.silu(h @ w)
    logits = (h @ head).float() / 0.7
    probs = torch.softmax(logits, -1)
    nxt = torch.multinomial(probs, 1)
    log.info("decode step %d tokens %s", step, nxt.view(-1).tolist())
