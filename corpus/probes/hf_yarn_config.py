"""Plain transformers generate() on a community long-context fine-tune whose config.json was edited by hand to turn on
YaRN (rope_scaling without its factor)."""
import argparse, time
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
import transformers

p = argparse.ArgumentParser()
p.add_argument("--model", required=True)
p.add_argument("--max-new-tokens", type=int, default=64)
args = p.parse_args()
print(f"transformers {transformers.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
print(f"Loading {args.model} ...", flush=True)
t0 = time.time()
tok = AutoTokenizer.from_pretrained(args.model)
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, device_map="cuda")
print(f"model loaded in {time.time() - t0:.1f}s", flush=True)
prompt = "Summarise the following contract in three sentences:\n" + "clause " * 200
ids = tok(prompt, return_tensors="pt").to("cuda")
out = model.generate(**ids, max_new_tokens=args.max_new_tokens, do_sample=False)
print(tok.decode(out[0, ids["input_ids"].shape[1]:]))
