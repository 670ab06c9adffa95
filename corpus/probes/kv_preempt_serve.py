"""A torch serving engine with a paged KV cache and a V0-style FCFS scheduler (recompute preemption: a preempted
sequence frees its blocks and goes back to the head of the waiting queue with its prompt and generated tokens). A
benchmark client sends three long-document summarisation requests (ignore_eos, long outputs) and waits for them.
Launched with --max-model-len 32768 and --num-gpu-blocks-override 512 (16-token blocks), as in the team's test script."""
import argparse, collections, math, threading, time
import torch
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Qwen2.5-7B-Instruct")
ap.add_argument("--max-model-len", type=int, default=32768)
ap.add_argument("--num-gpu-blocks-override", type=int, default=None)
ap.add_argument("--block-size", type=int, default=16)
ap.add_argument("--max-num-seqs", type=int, default=8)
ap.add_argument("--request-timeout", type=float, default=30.0)
args = ap.parse_args()
log = common.log("engine")
slog = common.log("scheduler")
api = common.log("api_server")

# Qwen2.5-7B shapes
H, L, KVH, HD, FF, V = 3584, 28, 4, 128, 18944, 152064
dev = torch.device("cuda")
dt = torch.bfloat16
log.info("Initializing a V0 LLM engine with config: model=%r, dtype=%s, max_seq_len=%d, tensor_parallel_size=1, "
         "block_size=%d, num_gpu_blocks_override=%s, max_num_seqs=%d, enable_prefix_caching=False, "
         "scheduling_policy=fcfs, preemption_mode=recompute", args.model, dt, args.max_model_len, args.block_size,
         args.num_gpu_blocks_override, args.max_num_seqs)
log.info("device %s, torch %s", torch.cuda.get_device_name(), torch.__version__)

t0 = time.time()
layers = []
for i in range(L):
    layers.append({
        "qkv": torch.empty(H, H + 2 * KVH * HD, device=dev, dtype=dt).normal_(0, 0.02),
        "o": torch.empty(H, H, device=dev, dtype=dt).normal_(0, 0.02),
        "gate_up": torch.empty(H, 2 * FF, device=dev, dtype=dt).normal_(0, 0.02),
        "down": torch.empty(FF, H, device=dev, dtype=dt).normal_(0, 0.02),
    })
embed = torch.empty(V, H, device=dev, dtype=dt).normal_(0, 0.02)
lm_head = torch.empty(H, V, device=dev, dtype=dt).normal_(0, 0.02)
torch.cuda.synchronize()
log.info("Loading model weights took %.4f GB and %.2f seconds", torch.cuda.memory_allocated() / 2**30, time.time() - t0)

bs = args.block_size
if args.num_gpu_blocks_override is not None:
    num_blocks = args.num_gpu_blocks_override
    log.info("Overriding num_gpu_blocks=%d with num_gpu_blocks_override=%d", 9146, num_blocks)
else:
    num_blocks = 9146
kv_cache = torch.zeros(num_blocks, 2, L, bs, KVH, HD, device=dev, dtype=dt)
log.info("# GPU blocks: %d, # CPU blocks: 0", num_blocks)
log.info("Maximum concurrency for %d tokens per request: %.2fx", args.max_model_len,
         num_blocks * bs / args.max_model_len)


@torch.inference_mode()
def forward(x):
    for p in layers:
        a = x @ p["qkv"]
        x = x + a[:, :H] @ p["o"]
        g, u = (x @ p["gate_up"]).chunk(2, dim=-1)
        x = x + (torch.nn.functional.silu(g) * u) @ p["down"]
    return x[-1:] @ lm_head


class Seq:
    def __init__(self, rid, prompt_len, max_tokens):
        self.rid, self.prompt_len, self.max_tokens = rid, prompt_len, max_tokens
        g = torch.Generator().manual_seed(prompt_len)
        self.prompt = torch.randint(0, 150000, (prompt_len,), generator=g)
        self.out = []
        self.blocks = 0
        self.done = threading.Event()
        self.arrival = time.time()

    @property
    def num_tokens(self):
        return self.prompt_len + len(self.out)


waiting, running = collections.deque(), []
free_blocks = num_blocks
num_preempt = 0
stats = {"prompt": 0, "gen": 0}
lock = threading.Lock()


def step():
    global free_blocks, num_preempt
    with lock:
        while waiting and len(running) < args.max_num_seqs:
            s = waiting[0]
            need = math.ceil((s.num_tokens + 1) / bs)
            if need > free_blocks:
                break
            waiting.popleft()
            s.blocks, free_blocks = need, free_blocks - need
            ids = torch.cat([s.prompt, torch.tensor(s.out, dtype=torch.long)]).to(dev)
            logits = forward(embed[ids])
            s.out.append(int(logits.argmax()))
            stats["prompt"] += len(ids)
            running.append(s)
        if not running:
            return False
        for s in list(running):
            if s not in running:
                continue
            if s.num_tokens + 1 > s.blocks * bs:
                if free_blocks == 0:
                    victim = running.pop()
                    free_blocks += victim.blocks
                    victim.blocks = 0
                    waiting.appendleft(victim)
                    num_preempt += 1
                    slog.warning("Sequence group %s is preempted by PreemptionMode.RECOMPUTE mode because there is not "
                                 "enough KV cache space. This can affect the end-to-end performance. Increase "
                                 "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
                                 "total_num_cumulative_preemption=%d", victim.rid, num_preempt)
                    if victim is s:
                        continue
                s.blocks += 1
                free_blocks -= 1
        if not running:
            return True
        x = embed[torch.tensor([s.out[-1] for s in running], device=dev)]
        logits = forward(x)
        tok = int(logits.argmax())
        for s in running:
            s.out.append(tok)
            stats["gen"] += 1
        for s in [s for s in running if len(s.out) >= s.max_tokens]:
            running.remove(s)
            free_blocks += s.blocks
            s.done.set()
    return True


stop = threading.Event()


def engine_loop():
    last = time.time()
    while not stop.is_set():
        busy = step()
        if not busy:
            time.sleep(0.01)
        now = time.time()
        if now - last >= 5.0:
            with lock:
                used = 1.0 - free_blocks / num_blocks
                log.info("Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d "
                         "reqs, Swapped: 0 reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: "
                         "0.0%%.", stats["prompt"] / (now - last), stats["gen"] / (now - last), len(running),
                         len(waiting), 100 * used)
                stats["prompt"] = stats["gen"] = 0
            last = now


log.info("Started engine process with PID %d", threading.get_native_id())
th = threading.Thread(target=engine_loop, daemon=True)
th.start()
api.info("Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)")
reqs = [Seq("cmpl-0", 6800, 8192), Seq("cmpl-1", 3000, 8192), Seq("cmpl-2", 2000, 8192)]
for s in reqs:
    api.info('127.0.0.1:51230 - "POST /v1/completions HTTP/1.1" received request %s: prompt_tokens=%d, max_tokens=%d, '
             'ignore_eos=True, temperature=0.0', s.rid, s.prompt_len, s.max_tokens)
    with lock:
        waiting.append(s)
    time.sleep(0.05)

deadline = time.time() + args.request_timeout
timed_out = []
for s in reqs:
    if not s.done.wait(max(0.0, deadline - time.time())):
        timed_out.append(s)
for s in timed_out:
    api.error("Request %s timed out after %.1f s (generated %d tokens, not finished)", s.rid, args.request_timeout,
              len(s.out))
if timed_out:
    api.error('127.0.0.1:51230 - "POST /v1/completions HTTP/1.1" 504 Gateway Timeout (%d requests)', len(timed_out))
    api.error("benchmark aborted: %d/%d requests did not complete within %.0f s", len(timed_out), len(reqs),
              args.request_timeout)
    stop.set()
    raise SystemExit(1)
api.info("all requests completed")
stop.set()
