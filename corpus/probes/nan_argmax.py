"""float16 overflow without sampling: greedy argmax of NaN logits returns token 0 every step."""
import torch, common
log = common.log("engine")
vocab = ["!", "\"", "#"] + [f"tok{i}" for i in range(3, 32000)]
log.info("torch %s on %s, dtype=float16", torch.__version__, torch.cuda.get_device_name())
w = (torch.randn(2048, 2048, device="cuda") * 80).half()
head = (torch.randn(2048, 32000, device="cuda") * 80).half()
h = torch.randn(1, 2048, device="cuda").half()
out = []
for step in range(24):
    h = torch.nn.functional.gelu(h @ w)
    tok = int(torch.argmax(h @ head, -1))
    out.append(vocab[tok])
log.info("greedy decode finished: 24 tokens")
print("generated text: '" + "".join(out) + "'")
