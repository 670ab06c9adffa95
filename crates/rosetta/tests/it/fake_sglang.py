"""A fake sglang server for the `rosetta run` tests (standard library only).

It prints an sglang-like start-up log (ServerArgs, weight loading with a progress bar, KV cache,
CUDA graph capture unless --disable-cuda-graph, uvicorn's "running on" line), listens on
127.0.0.1 (an OS-chosen port unless --port is given) and answers /v1/models and a streamed
/v1/chat/completions. Behaviours ($FAKE_SGLANG_MODE; an environment variable, so that the test's
control is no launch flag the journal would see as a change):

  decode-assert  the first completion request gets one token, then the server prints a decode-time
                 device-side-assert traceback (the kernel's assertion line first) and exits 1
  ok             answers every request with a few tokens; exits 0 on SIGTERM
  stall          stops printing in the middle of weight loading and sleeps
  ignore-term    like stall, but it and a child it starts ignore SIGTERM; pids go to $FAKE_SGLANG_PIDFILE
"""
import argparse, http.server, json, os, random, signal, socketserver, sys, threading, time

p = argparse.ArgumentParser()
p.add_argument("--model-path", default="/models/fake-llama-7b")
p.add_argument("--host", default="127.0.0.1")
p.add_argument("--port", type=int, default=0)
p.add_argument("--tp-size", type=int, default=1)
p.add_argument("--mem-fraction-static", type=float, default=0.88)
p.add_argument("--attention-backend", default="flashinfer")
p.add_argument("--disable-cuda-graph", action="store_true")
args = p.parse_args()
args.mode = os.environ.get("FAKE_SGLANG_MODE", "decode-assert")
args.pidfile = os.environ.get("FAKE_SGLANG_PIDFILE")

def now():
    return time.strftime("%Y-%m-%d %H:%M:%S")

def log(msg, tp=True):
    tag = " TP0" if tp else ""
    print(f"[{now()}{tag}] {msg}", flush=True)

class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

served = {"n": 0}
lock = threading.Lock()

ASSERT_TRACE = """/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:94: operator(): block: [0,0,0], thread: [{t},0,0] Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.
[{ts} TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2826, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 996, in event_loop_overlap
    self.process_batch_result(tmp_batch, tmp_result)
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2090, in process_batch_result
    self.process_batch_result_decode(batch, result)
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler_output_processor_mixin.py", line 288, in process_batch_result_decode
    result.copy_done.synchronize()
  File "/usr/local/lib/python3.12/dist-packages/torch/cuda/streams.py", line 231, in synchronize
    super().synchronize()
torch.AcceleratorError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        print(f'INFO:     127.0.0.1:{self.client_address[1]} - "{self.command} {self.path} HTTP/1.1"', flush=True)

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": args.model_path, "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": "not found"}})

    def chunk(self, text, finish=None):
        d = {"id": "x", "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}]}
        data = f"data: {json.dumps(d)}\n\n".encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n) or b"{}")
        if self.path != "/v1/chat/completions":
            return self.send_json(404, {"error": {"message": "not found"}})
        with lock:
            served["n"] += 1
        if args.mode == "no-stream":
            # Answers the whole completion at once, not as a stream: no token arrives on
            # a stream, yet the log shows no error.
            return self.send_json(200, {"object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}]})
        log(f"Prefill batch, #new-seq: 1, #new-token: 9, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, cuda graph: False")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.chunk("Hello")
        if args.mode == "decode-assert":
            time.sleep(0.2)
            # One thread's assertion, always the same one: the report quotes this line.
            sys.stdout.write(ASSERT_TRACE.format(ts=now(), t=22))
            sys.stdout.flush()
            os._exit(1)
        for word in [",", " I", " am", " a", " fake", " server", "."][: max(1, req.get("max_tokens", 8) - 1)]:
            self.chunk(word)
        self.chunk("", finish="length")
        end = b"data: [DONE]\n\n"
        self.wfile.write(f"{len(end):x}\r\n".encode() + end + b"\r\n0\r\n\r\n")
        self.wfile.flush()

def main():
    if args.mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                time.sleep(1)
        if args.pidfile:
            with open(args.pidfile, "w") as f:
                f.write(f"{os.getpid()} {child}\n")
    srv = Server((args.host, args.port), Handler)
    port = srv.server_address[1]
    seed = random.randint(0, 1 << 30)
    cg = "True" if args.disable_cuda_graph else "False"
    log(f"server_args=ServerArgs(model_path='{args.model_path}', tokenizer_path='{args.model_path}', "
        f"host='{args.host}', port={port}, mem_fraction_static={args.mem_fraction_static}, "
        f"tp_size={args.tp_size}, random_seed={seed}, attention_backend='{args.attention_backend}', "
        f"disable_cuda_graph={cg}, cuda_graph_max_bs=160, dtype='auto', kv_cache_dtype='auto')", tp=False)
    log("Init torch distributed begin.")
    log("Init torch distributed ends. mem usage=0.00 GB")
    log("Load weight begin. avail mem=139.28 GB")
    sys.stdout.write("Loading safetensors checkpoint shards:   0% Completed | 0/2 [00:00<?, ?it/s]\r")
    sys.stdout.flush()
    time.sleep(0.1)
    sys.stdout.write("Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:00<00:00,  9.1it/s]\r")
    sys.stdout.flush()
    if args.mode in ("stall", "ignore-term"):
        while True:
            time.sleep(1)
    time.sleep(0.1)
    sys.stdout.write("Loading safetensors checkpoint shards: 100% Completed | 2/2 [00:00<00:00,  9.3it/s]\n")
    log("Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=126.02 GB, mem usage=13.26 GB.")
    log("KV Cache is allocated. #tokens: 100000, K size: 6.10 GB, V size: 6.10 GB")
    log("Memory pool end. avail mem=113.50 GB")
    if not args.disable_cuda_graph:
        log("Capture cuda graph begin. This can take up to several minutes. avail mem=113.20 GB")
        log("Capture cuda graph end. Time elapsed: 0.30 s. mem usage=0.40 GB. avail mem=112.80 GB.")
    log(f"max_total_num_tokens=100000, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=8192")
    print(f"INFO:     Started server process [{os.getpid()}]", flush=True)
    print("INFO:     Waiting for application startup.", flush=True)
    print("INFO:     Application startup complete.", flush=True)
    print(f"INFO:     Uvicorn running on http://{args.host}:{port} (Press CTRL+C to quit)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0)) if args.mode in ("ok", "no-stream") else None
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    log("The server is fired up and ready to roll!", tp=False)
    while True:
        time.sleep(1)

main()
