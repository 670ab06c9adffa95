"""A small OpenAI-compatible server that generates with torch on the GPU, for `rosetta run --probe`.

A byte-level language model with random weights (seeded): learned position embeddings, two
transformer blocks, greedy decoding. It serves /v1/models and /v1/chat/completions (streamed or
not) on 127.0.0.1 with the standard library's HTTP server.

The fault: the model's position table has --max-position-embeddings rows, and the server checks
neither the prompt nor prompt + max_tokens against it. With the default of 50 rows and the chat
template below, the probe's prompt ("Say hello in one sentence.") is exactly 50 tokens: prefill
reads positions 0..49 and returns the first token; the decode step for the second token reads
position 50, one past the table, and the embedding lookup trips the device-side bounds assert.
The error surfaces at the next host sync; the server then dies, as an engine whose CUDA context
is broken does.
"""
import argparse, http.server, json, os, socketserver, threading, time
import torch
import common

p = argparse.ArgumentParser()
p.add_argument("--host", default="127.0.0.1")
p.add_argument("--port", type=int, default=0)
p.add_argument("--model", default="tiny-bytes-lm")
p.add_argument("--max-position-embeddings", type=int, default=50)
p.add_argument("--hidden", type=int, default=256)
p.add_argument("--layers", type=int, default=2)
args = p.parse_args()
log = common.log("server")
log.info("args: Namespace(host=%r, port=%d, model=%r, max_position_embeddings=%d, hidden=%d, layers=%d)",
         args.host, args.port, args.model, args.max_position_embeddings, args.hidden, args.layers)
dev = torch.device("cuda")
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
VOCAB = 256


class TinyLM(torch.nn.Module):
    def __init__(self, vocab, hidden, layers, max_pos):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, hidden)
        self.pos = torch.nn.Embedding(max_pos, hidden)
        layer = torch.nn.TransformerEncoderLayer(hidden, 4, 4 * hidden, dropout=0.0, batch_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, ids, positions):
        x = self.tok(ids) + self.pos(positions)
        n = ids.shape[1]
        mask = torch.nn.Transformer.generate_square_subsequent_mask(n, device=ids.device)
        return self.head(self.blocks(x, mask=mask, is_causal=True))


log.info("Loading weights (random init, seed 0)")
t0 = time.time()
torch.manual_seed(0)
model = TinyLM(VOCAB, args.hidden, args.layers, args.max_position_embeddings).to(dev).eval()
n_params = sum(p.numel() for p in model.parameters())
torch.cuda.synchronize()
log.info("model loaded: %d parameters, vocab_size=%d, hidden=%d, max_position_embeddings=%d (%.2f s)",
         n_params, VOCAB, args.hidden, args.max_position_embeddings, time.time() - t0)


def template(messages):
    text = "".join(f"<|{m.get('role', 'user')}|>\n{m.get('content', '')}\n" for m in messages)
    return (text + "<|assistant|>\n").encode()


@torch.inference_mode()
def generate(prompt_ids, max_tokens, emit):
    """Greedy decoding, recomputing the whole sequence each step (no KV cache)."""
    ids = torch.tensor([prompt_ids], device=dev)
    n = ids.shape[1]
    log.info("request: prompt_len=%d max_new_tokens=%d", n, max_tokens)
    t0 = time.time()
    logits = model(ids, torch.arange(n, device=dev).unsqueeze(0))
    tok = int(logits[0, -1].argmax().item())
    log.info("prefill done: first token %d in %.1f ms", tok, (time.time() - t0) * 1e3)
    emit(tok)
    for step in range(1, max_tokens):
        ids = torch.cat([ids, torch.tensor([[tok]], device=dev)], dim=1)
        pos = ids.shape[1] - 1
        log.info("decode step %d: position=%d", step, pos)
        logits = model(ids, torch.arange(ids.shape[1], device=dev).unsqueeze(0))
        tok = int(logits[0, -1].argmax().item())
        emit(tok)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        log.info("%s - %s", self.client_address[0], fmt % a)

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/v1/models":
            return self.send_json(200, {"object": "list", "data": [{"id": args.model, "object": "model"}]})
        self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def chunk(self, data):
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_POST(self):
        if self.path != "/v1/chat/completions":
            return self.send_json(404, {"error": {"message": f"no route {self.path}"}})
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        prompt = list(template(req.get("messages", [])))
        max_tokens = int(req.get("max_tokens") or 16)
        stream = bool(req.get("stream"))
        pieces = []
        if stream:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

        def emit(tok):
            text = bytes([tok]).decode("latin-1")
            pieces.append(text)
            if stream:
                d = {"object": "chat.completion.chunk", "model": args.model,
                     "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
                self.chunk(f"data: {json.dumps(d)}\n\n".encode())

        try:
            generate(prompt, max_tokens, emit)
        except Exception:
            log.exception("generation failed")
            # The CUDA context is broken: nothing more can run on this device.
            os._exit(1)
        if stream:
            d = {"object": "chat.completion.chunk", "model": args.model,
                 "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
            self.chunk(f"data: {json.dumps(d)}\n\n".encode())
            self.chunk(b"data: [DONE]\n\n")
            self.chunk(b"")
        else:
            self.send_json(200, {"object": "chat.completion", "model": args.model, "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "".join(pieces)}, "finish_reason": "length"}]})


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server((args.host, args.port), Handler)
log.info("HTTP server listening on http://%s:%d", args.host, srv.server_address[1])
srv.serve_forever()
