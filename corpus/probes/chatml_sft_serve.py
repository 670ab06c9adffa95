"""A small OpenAI-style chat server on transformers: loads a fine-tuned checkpoint and its tokenizer, warms up on a plain
prompt, then serves /v1/chat/completions requests by applying the tokenizer's chat template."""
import argparse, json, os, time, uuid
import torch
import common
from transformers import AutoModelForCausalLM, AutoTokenizer

log = common.log("chat-server")
ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True)
ap.add_argument("--dtype", default="bfloat16")
ap.add_argument("--max-new-tokens", type=int, default=32)
ap.add_argument("--port", type=int, default=8000)
args = ap.parse_args()

log.info("args: %s", vars(args))
log.info("torch %s, device %s", torch.__version__, torch.cuda.get_device_name())
tok = AutoTokenizer.from_pretrained(args.model)
log.info("tokenizer: %s, %d tokens, special: bos=%s eos=%s, chat_template=%s", type(tok).__name__, len(tok),
         tok.bos_token, tok.eos_token, "yes" if tok.chat_template else "no")
t0 = time.time()
model = AutoModelForCausalLM.from_pretrained(args.model, dtype=getattr(torch, args.dtype)).cuda().eval()
log.info("model: %s, %d layers, hidden %d, %.1fM params, loaded in %.1fs", model.config.architectures[0],
         model.config.num_hidden_layers, model.config.hidden_size, sum(p.numel() for p in model.parameters()) / 1e6,
         time.time() - t0)


@torch.inference_mode()
def generate(input_ids, max_new_tokens):
    ids = torch.tensor([input_ids], device="cuda")
    out = model(input_ids=ids, use_cache=True)
    past = out.past_key_values
    nxt = out.logits[:, -1].argmax(-1, keepdim=True)
    gen = [nxt.item()]
    for _ in range(max_new_tokens - 1):
        out = model(input_ids=nxt, past_key_values=past, use_cache=True)
        past = out.past_key_values
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        gen.append(nxt.item())
        if gen[-1] == tok.eos_token_id:
            break
    return gen


log.info("warming up with a 16-token prompt")
warm = tok("hello please write a short poem about the GPU")["input_ids"]
generate(warm, 4)
log.info("warmup done")
log.info("Uvicorn running on http://0.0.0.0:%d (Press CTRL+C to quit)", args.port)

requests = [
    {"messages": [{"role": "system", "content": "you are a helpful assistant"},
                  {"role": "user", "content": "tell me a short story about a GPU"}], "max_tokens": 24},
]
for body in requests:
    rid = "chatcmpl-" + uuid.uuid4().hex[:12]
    log.info('127.0.0.1:51844 - "POST /v1/chat/completions HTTP/1.1" %s', rid)
    ids = tok.apply_chat_template(body["messages"], add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    log.info("%s: prompt_tokens=%d max_tokens=%d", rid, len(ids), body["max_tokens"])
    t0 = time.time()
    gen = generate(ids, body["max_tokens"])
    text = tok.decode(gen, skip_special_tokens=True)
    log.info("%s: completion_tokens=%d in %.2fs", rid, len(gen), time.time() - t0)
    print(json.dumps({"id": rid, "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}))
