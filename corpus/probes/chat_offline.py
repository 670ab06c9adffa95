"""Offline chat batch: applies the tokenizer's chat template to each conversation, then generates."""
import argparse, json, time, torch, transformers, common
from transformers import AutoModelForCausalLM, AutoTokenizer
log = common.log("llm_engine")

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h4/llama-base-260m")
ap.add_argument("--max-tokens", type=int, default=64)
args = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
log.info("Initializing an LLM engine (transformers %s) with config: model=%r, dtype=bfloat16, max_tokens=%d, device=%s",
         transformers.__version__, args.model, args.max_tokens, dev)
t0 = time.time()
tok = AutoTokenizer.from_pretrained(args.model)
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16).to(dev).eval()
log.info("Loading weights took %.2f seconds; model memory %.3f GiB", time.time() - t0,
         sum(p.numel() * p.element_size() for p in model.parameters()) / 2**30)
with torch.no_grad():
    ids = torch.randint(3, 1000, (4, 64), device=dev)
    model(ids)
log.info("Warm-up forward done (4 x 64 tokens)")
conversations = [
    [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Write one line about the sea."}],
    [{"role": "user", "content": "What is the capital of France?"}],
]
log.info("Processing %d chat requests", len(conversations))
for i, conv in enumerate(conversations):
    log.info("request %d: %s", i, json.dumps(conv)[:80])
    prompt_ids = tok.apply_chat_template(conv, add_generation_prompt=True, return_tensors="pt").to(dev)
    out = model.generate(prompt_ids, max_new_tokens=args.max_tokens, do_sample=False)
    log.info("request %d done: %r", i, tok.decode(out[0, prompt_ids.shape[1]:]))
