"""A transformers-based batch generation service: prompts of different lengths are right-padded into one prefill batch.
The pad id comes from the tokenizer when it has one; the service falls back to -1 (and masks pads out with the
attention mask) when it has none."""
import argparse, time
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h8/tiny-llama-nopad")
ap.add_argument("--max-new-tokens", type=int, default=16)
args = ap.parse_args()
log = common.log("batch_service")
import transformers
log.info("torch %s, transformers %s, device %s", torch.__version__, transformers.__version__, torch.cuda.get_device_name())
t0 = time.time()
tok = AutoTokenizer.from_pretrained(args.model)
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16).cuda().eval()
log.info("loaded %s in %.2fs (%d params, vocab %d)", args.model, time.time() - t0,
         sum(p.numel() for p in model.parameters()), model.config.vocab_size)
pad_id = tok.pad_token_id if tok.pad_token_id is not None else -1
log.info("tokenizer: bos=%s eos=%s pad=%s -> pad id %d", tok.bos_token_id, tok.eos_token_id, tok.pad_token_id, pad_id)

prompts = ["Hello my name is", "the time of the long day was more than they could write about",
           "what is your name", "I like to look at the water"]
reqs = [tok(p)["input_ids"] for p in prompts]
for i, r in enumerate(reqs):
    log.info("request %d: %d prompt tokens", i, len(r))
n = max(len(r) for r in reqs)
input_ids = torch.tensor([r + [pad_id] * (n - len(r)) for r in reqs], device="cuda")
attn = torch.tensor([[1] * len(r) + [0] * (n - len(r)) for r in reqs], device="cuda")
log.info("prefill: batch of %d requests padded to %d tokens", len(reqs), n)


@torch.inference_mode()
def prefill(input_ids, attn):
    out = model(input_ids=input_ids, attention_mask=attn, use_cache=True)
    last = attn.sum(1) - 1
    return out.logits[torch.arange(len(last), device="cuda"), last].argmax(-1), out.past_key_values


first, kv = prefill(input_ids, attn)
log.info("prefill done, first tokens %s", first.tolist())
