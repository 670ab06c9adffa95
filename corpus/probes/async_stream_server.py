"""An OpenAI-style streaming completion server on plain asyncio: an engine background loop batches the running requests,
runs one decode step on the GPU in a worker thread, and hands each request its next token through a queue; the HTTP
handler streams the tokens as server-sent events and aborts the request when the client goes away.
The probe's own clients (in the same process) send two requests: the first client reads three events and hangs up."""
import argparse, asyncio, json, socket, struct, time, traceback
import torch
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Mistral-7B-Instruct-v0.3")
ap.add_argument("--port", type=int, default=8021)
args = ap.parse_args()
log = common.log("async_llm_engine")
api = common.log("api_server")


class AsyncEngineDeadError(RuntimeError):
    pass


class Model:
    def __init__(self, V=32768, H=2048, L=8):
        torch.manual_seed(0)
        self.embed = torch.randn(V, H, device="cuda", dtype=torch.bfloat16) * 0.02
        self.layers = [torch.randn(H, H, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(L)]
        self.lm_head = torch.randn(V, H, device="cuda", dtype=torch.bfloat16) * 0.02

    @torch.inference_mode()
    def step(self, last_tokens):
        h = self.embed[torch.tensor(last_tokens, device="cuda")]
        for w in self.layers:
            h = h + torch.tanh(h @ w)
        return (h @ self.lm_head.t()).argmax(-1).tolist()


class AsyncLLMEngine:
    def __init__(self, model):
        self.model = model
        self.running = {}          # request_id -> state
        self.new_requests = asyncio.Queue()
        self.errored_with = None
        self.loop_task = None
        self.steps = 0

    def start_background_loop(self):
        self.loop_task = asyncio.get_running_loop().create_task(self.run_engine_loop())
        self.loop_task.add_done_callback(self._loop_done)

    def _loop_done(self, task):
        exc = task.exception()
        if exc is None:
            return
        self.errored_with = exc
        log.error("Engine background task failed", exc_info=exc)
        for st in self.running.values():
            st["queue"].put_nowait(AsyncEngineDeadError("Task finished unexpectedly. This should never happen! "
                                                        "Please open an issue on Github."))

    async def add_request(self, rid, prompt_ids, max_tokens):
        if self.errored_with is not None:
            raise AsyncEngineDeadError("Background loop has errored already.") from self.errored_with
        q = asyncio.Queue()
        await self.new_requests.put((rid, {"tokens": list(prompt_ids), "n_out": 0, "max_tokens": max_tokens, "queue": q}))
        log.info("Added request %s.", rid)
        return q

    def abort(self, rid):
        if self.running.pop(rid, None) is not None:
            log.info("Aborted request %s.", rid)

    async def run_engine_loop(self):
        while True:
            while not self.new_requests.empty():
                rid, st = self.new_requests.get_nowait()
                self.running[rid] = st
            if not self.running:
                rid, st = await self.new_requests.get()
                self.running[rid] = st
                continue
            batch = list(self.running)
            last = [self.running[r]["tokens"][-1] for r in batch]
            next_tokens = await asyncio.to_thread(self.model.step, last)
            self.steps += 1
            for rid, tok in zip(batch, next_tokens):
                st = self.running[rid]
                st["tokens"].append(tok)
                st["n_out"] += 1
                done = st["n_out"] >= st["max_tokens"]
                st["queue"].put_nowait((tok, done))
                if done:
                    del self.running[rid]
                    log.info("Finished request %s.", rid)
            if self.steps % 16 == 0:
                log.info("Avg generation throughput: %.1f tokens/s, Running: %d reqs, Pending: 0 reqs",
                         len(batch) / 0.004, len(self.running))


engine = None
counter = 0


async def handle(reader, writer):
    global counter
    peer = "%s:%d" % writer.get_extra_info("peername")[:2]
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    method, path, _ = lines[0].split(" ")
    clen = next(int(l.split(":")[1]) for l in lines if l.lower().startswith("content-length"))
    body = json.loads(await reader.readexactly(clen))
    counter += 1
    rid = "cmpl-%08x" % (0x5a17c000 + counter)
    prompt_ids = [1] + [(ord(c) * 7) % 32000 for c in body["prompt"]]
    try:
        q = await engine.add_request(rid, prompt_ids, body.get("max_tokens", 16))
    except AsyncEngineDeadError:
        api.error("Error in completion request %s\n%s", rid, traceback.format_exc().rstrip())
        writer.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                     + json.dumps({"object": "error", "message": "Background loop has errored already.",
                                   "type": "InternalServerError", "code": 500}).encode())
        await writer.drain()
        writer.close()
        api.info('%s - "%s %s HTTP/1.1" 500 Internal Server Error', peer, method, path)
        return
    api.info('%s - "%s %s HTTP/1.1" 200 OK', peer, method, path)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    try:
        while True:
            item = await q.get()
            if isinstance(item, Exception):
                raise item
            tok, done = item
            writer.write(("data: " + json.dumps({"id": rid, "choices": [{"index": 0, "text": f"<{tok}>",
                                                                         "finish_reason": "length" if done else None}]})
                          + "\n\n").encode())
            await writer.drain()
            if done:
                writer.write(b"data: [DONE]\n\n")
                await writer.drain()
                break
    except (ConnectionResetError, BrokenPipeError) as e:
        api.info("client %s disconnected (%s); aborting request %s", peer, type(e).__name__, rid)
        engine.abort(rid)
    finally:
        writer.close()


async def client(prompt, max_tokens, hang_up_after=None, name="client"):
    reader, writer = await asyncio.open_connection("127.0.0.1", args.port)
    body = json.dumps({"model": args.model, "prompt": prompt, "max_tokens": max_tokens, "stream": True}).encode()
    writer.write(b"POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()
    status = (await reader.readline()).decode().strip()
    await reader.readuntil(b"\r\n\r\n")
    events = 0
    while True:
        line = await reader.readline()
        if not line:
            break
        if line.startswith(b"data: "):
            events += 1
            if hang_up_after and events >= hang_up_after:
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return status, events, "hung up"
        elif line.strip() and not line.startswith(b"data"):
            return status, events, line.decode().strip()
    writer.close()
    return status, events, "eof"


async def main():
    global engine
    free, total = torch.cuda.mem_get_info()
    log.info("Initializing an LLM engine with config: model=%r, dtype=torch.bfloat16, max_seq_len=8192, "
             "disable_log_requests=False, device=%s", args.model, torch.cuda.get_device_name())
    t0 = time.time()
    engine = AsyncLLMEngine(Model())
    log.info("Loading model weights took %.2f s, %.2f GiB", time.time() - t0, torch.cuda.memory_allocated() / 2**30)
    server = await asyncio.start_server(handle, "127.0.0.1", args.port)
    engine.start_background_loop()
    api.info("Started server process")
    api.info("Uvicorn running on http://127.0.0.1:%d (Press CTRL+C to quit)", args.port)
    r1 = asyncio.create_task(client("Write a long story about a lighthouse keeper.", 256, hang_up_after=3, name="c1"))
    r2 = asyncio.create_task(client("List three prime numbers.", 8, name="c2"))
    await asyncio.gather(r1, r2)
    await asyncio.sleep(0.5)
    status, events, tail = await client("Summarize the plot of Hamlet in one sentence.", 32, name="c3")
    print(f"client c3: {status} ({events} events) {tail}")
    await asyncio.sleep(0.2)
    if engine.errored_with is not None:
        api.error("AsyncLLMEngine is already dead, terminating server process")
        server.close()
        return 1
    return 0


raise SystemExit(asyncio.run(main()))
