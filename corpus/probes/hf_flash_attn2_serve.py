"""Offline generation with transformers, asking for the FlashAttention-2 attention implementation."""
import argparse, time, torch, transformers, common
from transformers import AutoModelForCausalLM, AutoTokenizer
log = common.log("engine")

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h4/llama-base-260m")
ap.add_argument("--attn-implementation", default="flash_attention_2")
ap.add_argument("--dtype", default="bfloat16")
ap.add_argument("--max-new-tokens", type=int, default=32)
args = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
log.info("torch %s, transformers %s, device %s", torch.__version__, transformers.__version__,
         torch.cuda.get_device_name() if dev == "cuda" else "cpu")
log.info("Engine args: model=%s dtype=%s attn_implementation=%s max_new_tokens=%d", args.model, args.dtype,
         args.attn_implementation, args.max_new_tokens)
log.info("Loading tokenizer from %s", args.model)
tok = AutoTokenizer.from_pretrained(args.model)
log.info("Loading model weights from %s", args.model)
t0 = time.time()
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=getattr(torch, args.dtype),
                                             attn_implementation=args.attn_implementation).to(dev)
log.info("Model loaded in %.2fs, %.1fM params", time.time() - t0, sum(p.numel() for p in model.parameters()) / 1e6)
prompts = ["the man was in the house", "one of the things he is"]
for p in prompts:
    ids = tok(p, return_tensors="pt").input_ids.to(dev)
    log.info("request: prompt_len=%d", ids.shape[1])
    out = model.generate(ids, max_new_tokens=args.max_new_tokens, do_sample=False)
    log.info("completion: %r", tok.decode(out[0, ids.shape[1]:]))
