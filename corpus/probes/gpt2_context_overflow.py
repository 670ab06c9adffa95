"""A GPT-2-style model (learned positions, n_positions=1024) serves a 1000-token prompt with max_new_tokens=64 and no length check."""
import torch, common
from transformers import GPT2Config, GPT2LMHeadModel
log = common.log("engine")
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
cfg = GPT2Config(n_positions=1024, n_embd=512, n_layer=4, n_head=8, vocab_size=50257)
log.info("Loading model gpt2-small-ft: model_type=%s n_positions=%d n_layer=%d", cfg.model_type, cfg.n_positions, cfg.n_layer)
torch.manual_seed(0)
model = GPT2LMHeadModel(cfg).cuda().half().eval()
log.info("Load weight end. mem usage=%.2f GB", torch.cuda.memory_allocated() / 1e9)
log.info("Server ready (max_new_tokens default 64)")
prompt = torch.randint(0, 50257, (1, 1000), device="cuda")
log.info("request 0: prompt_tokens=%d max_new_tokens=64", prompt.shape[1])
with torch.no_grad():
    out = model(prompt, use_cache=True)
    past = out.past_key_values
    tok = out.logits[:, -1].argmax(-1, keepdim=True)
    log.info("prefill done: %d tokens, first token id=%d", prompt.shape[1], tok.item())
    generated = [tok.item()]
    for step in range(1, 64):
        out = model(tok, past_key_values=past, use_cache=True)
        past = out.past_key_values
        tok = out.logits[:, -1].argmax(-1, keepdim=True)
        generated.append(tok.item())
        if step % 8 == 0:
            log.info("decode step %d, seq_len=%d", step, prompt.shape[1] + step + 1)
log.info("request 0 finished: %d tokens", len(generated))
