"""A small streaming completion server: greedy decoding with a byte-level BPE tokenizer; every generated token is
detokenized on its own and sent as one server-sent event, and the client joins the events' text."""
import argparse, json, time
import torch
from tokenizers import Tokenizer
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h8/bpe-chat")
ap.add_argument("--max-tokens", type=int, default=128)
args = ap.parse_args()
log = common.log("engine")
api = common.log("api_server")
log.info("torch %s, device %s", torch.__version__, torch.cuda.get_device_name())
tok = Tokenizer.from_file(f"{args.model}/tokenizer.json")
ck = torch.load(f"{args.model}/model.pt", map_location="cuda")
cfg = ck["config"]
pos_embed, lm_head = ck["pos_embed"], ck["lm_head"]
eos = tok.token_to_id("<|endoftext|>")
log.info("model loaded: vocab=%d hidden=%d max_positions=%d, eos=%d", cfg["vocab_size"], cfg["hidden_size"],
         cfg["max_position_embeddings"], eos)
api.info("Uvicorn running on http://0.0.0.0:8000")


def forward(position):
    return pos_embed[position] @ lm_head.t()


def stream(prompt, max_tokens):
    ids = tok.encode(prompt).ids
    pos = len(ids) - 1
    for i in range(max_tokens):
        nxt = int(forward(pos).float().argmax())
        if nxt == eos:
            yield None, "stop"
            return
        yield tok.decode([nxt]), None
        pos += 1
    yield None, "length"


prompt = json.load(open(f"{args.model}/example.json"))["prompt"]
api.info('127.0.0.1:40512 - "POST /v1/completions HTTP/1.1" 200 OK')
log.info("Received request cmpl-7d1c: prompt: %r, params: max_tokens=%d, temperature=0.0, stream=True", prompt,
         args.max_tokens)
t0 = time.time()
text, n = "", 0
for piece, finish in stream(prompt, args.max_tokens):
    if finish:
        print("data: " + json.dumps({"id": "cmpl-7d1c", "choices": [{"index": 0, "text": "", "finish_reason": finish}]}))
        print("data: [DONE]")
        break
    n += 1
    text += piece
    print("data: " + json.dumps({"id": "cmpl-7d1c", "choices": [{"index": 0, "text": piece, "finish_reason": None}]},
                                ensure_ascii=False))
log.info("Finished request cmpl-7d1c: %d completion tokens in %.2fs", n, time.time() - t0)
print("client: completion text: " + text)
