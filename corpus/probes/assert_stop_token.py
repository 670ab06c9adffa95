"""A request's stop token id beyond the vocabulary trips an index assert in the sampler's masking."""
import torch, common
log = common.log("server")
vocab, hidden = 32000, 256
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
lm_head = torch.nn.Linear(hidden, vocab, device="cuda", dtype=torch.float16)
log.info("model loaded: vocab_size=%d hidden=%d", vocab, hidden)
log.info('request req-7: {"prompt_len": 21, "max_tokens": 64, "stop_token_ids": [2, 151645]}')
stop_ids = torch.tensor([2, 151645], device="cuda")
h = torch.randn(1, hidden, device="cuda", dtype=torch.float16)
for step in range(64):
    logits = lm_head(h).float()
    if step < 4:  # min_tokens: mask the stop tokens for the first steps
        logits.index_fill_(1, stop_ids, float("-inf"))
    probs = torch.softmax(logits, -1)
    tok = torch.argmax(probs, -1)
    log.info("decode step %d token=%d", step, tok.item())
