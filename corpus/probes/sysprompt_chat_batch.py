"""An offline batch-inference job (LLM.chat-style): it reads conversations from a JSONL file, renders each batch with the
model's chat template (transformers' apply_chat_template), tokenizes, and generates greedily on the GPU. The model folder
(tokenizer + template) and the evaluation set are written by h9_setup.py."""
import argparse, json, os, time
import torch
from transformers import AutoTokenizer
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h9/Mistral-7B-Instruct-v0.1")
ap.add_argument("--input", default="/tmp/h9/eval_v2.jsonl")
ap.add_argument("--batch-size", type=int, default=8)
ap.add_argument("--max-tokens", type=int, default=24)
args = ap.parse_args()
log = common.log("batch_infer")

log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
tok = AutoTokenizer.from_pretrained(args.model)
cfg = json.load(open(os.path.join(args.model, "config.json")))
log.info("model=%s vocab=%d hidden=%d dtype=bfloat16 chat_template=%s", args.model, cfg["vocab_size"],
         cfg["hidden_size"], "tokenizer_config.json" if tok.chat_template else None)
convs = [json.loads(l) for l in open(args.input)]
log.info("loaded %d conversations from %s", len(convs), args.input)

torch.manual_seed(0)
dev = torch.device("cuda")
V, D = cfg["vocab_size"], cfg["hidden_size"]
embed = torch.randn(V, D, device=dev, dtype=torch.bfloat16) * 0.02
mix = torch.randn(D, D, device=dev, dtype=torch.bfloat16) * D ** -0.5
head = torch.randn(D, V, device=dev, dtype=torch.bfloat16) * 0.02
log.info("weights loaded (%.2f GiB)", torch.cuda.memory_allocated() / 2**30)


@torch.inference_mode()
def generate(batch_ids, max_tokens):
    outs = []
    for ids in batch_ids:
        x = embed[torch.tensor(ids, device=dev)].mean(0, keepdim=True)
        out = []
        for _ in range(max_tokens):
            nxt = int(((x @ mix).tanh() @ head).argmax())
            if nxt == tok.eos_token_id:
                break
            out.append(nxt)
            x = 0.5 * x + 0.5 * embed[nxt][None]
        outs.append(out)
    return outs


results = []
t_start = time.time()
for b in range(0, len(convs), args.batch_size):
    batch = convs[b:b + args.batch_size]
    prompts = [tok.apply_chat_template(c["messages"], tokenize=False, add_generation_prompt=True) for c in batch]
    batch_ids = [tok(p, add_special_tokens=False)["input_ids"] for p in prompts]
    outs = generate(batch_ids, args.max_tokens)
    for c, ids, o in zip(batch, batch_ids, outs):
        results.append({"id": c["id"], "prompt_tokens": len(ids), "completion": tok.decode(o)})
    done = len(results)
    el = time.time() - t_start
    log.info("Processed prompts: %d/%d [%.1fs elapsed, %.2f it/s, input %d toks, output %d toks]", done, len(convs),
             el, done / el, sum(r["prompt_tokens"] for r in results), sum(len(o) for o in outs))
out_path = os.path.splitext(args.input)[0] + ".out.jsonl"
with open(out_path, "w") as f:
    for r in results:
        f.write(json.dumps(r) + "\n")
log.info("wrote %d results to %s", len(results), out_path)
