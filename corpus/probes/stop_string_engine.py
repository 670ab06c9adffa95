"""A threaded torch serving engine: an engine-core thread runs scheduler steps under the scheduler's lock and passes each
step's new tokens to the output processor, which detokenizes, checks stop strings and finishes requests; the API thread
waits for results. A stall watchdog dumps the threads' stacks when no step completes for a while."""
import argparse, faulthandler, sys, threading, time
import torch
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Qwen2.5-3B-Instruct")
ap.add_argument("--stall-timeout", type=float, default=15.0)
args = ap.parse_args()
log = common.log("engine_core")
api = common.log("api_server")
wd_log = common.log("watchdog")

WORDS = ["the", " answer", " is", " 42", ".", "\n", "Question", ":", " What", " about", " 17", "?", " Answer", " It",
         " depends", " on", " context"]


class Request:
    def __init__(self, rid, prompt, max_tokens, stop):
        self.rid, self.prompt, self.max_tokens, self.stop = rid, prompt, max_tokens, stop
        self.text, self.n_out, self.done = "", 0, threading.Event()
        self.finish_reason = None


class Scheduler:
    def __init__(self):
        self.lock = threading.Lock()
        self.running = {}
        self.finished = []

    def add(self, req):
        with self.lock:
            self.running[req.rid] = req

    def abort_request(self, rid, reason):
        with self.lock:
            req = self.running.pop(rid, None)
        if req is not None:
            req.finish_reason = reason
            req.done.set()


class OutputProcessor:
    def __init__(self, scheduler):
        self.scheduler = scheduler

    def process(self, req, token_id):
        """Returns True when the request finished on length (the scheduler frees it after the step)."""
        req.text += WORDS[token_id % len(WORDS)]
        req.n_out += 1
        for s in req.stop:
            if s in req.text:
                req.text = req.text[:req.text.index(s)]
                self.scheduler.abort_request(req.rid, "stop")     # free the slot as soon as a stop string matches
                return False
        if req.n_out >= req.max_tokens:
            req.finish_reason = "length"
            return True
        return False


class EngineCore(threading.Thread):
    def __init__(self, scheduler, outputs):
        super().__init__(name="EngineCore", daemon=True)
        self.scheduler, self.outputs = scheduler, outputs
        torch.manual_seed(0)
        self.W = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16) * 0.03
        self.head = torch.randn(len(WORDS), 1024, device="cuda", dtype=torch.bfloat16)
        self.h = torch.randn(1024, device="cuda", dtype=torch.bfloat16)
        self.steps, self.last_step_time = 0, time.time()
        self.pattern = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 5, 12, 7, 13, 14, 15, 16, 4, 5, 6, 7]

    def model_step(self, n):
        self.h = torch.tanh(self.h @ self.W)
        logits = (self.head @ self.h).float()
        torch.cuda.synchronize()
        return [self.pattern[(self.steps + i) % len(self.pattern)] for i in range(n)]

    def step(self):
        with self.scheduler.lock:
            reqs = list(self.scheduler.running.values())
            if not reqs:
                return False
            toks = self.model_step(len(reqs))
            finished = [req for req, t in zip(reqs, toks) if self.outputs.process(req, t)]
            for req in finished:
                del self.scheduler.running[req.rid]
                req.done.set()
            self.steps += 1
        self.last_step_time = time.time()
        return True

    def run(self):
        while True:
            if not self.step():
                time.sleep(0.002)


def watchdog(core, timeout):
    while True:
        time.sleep(1.0)
        busy = bool(core.scheduler.running)
        if busy and time.time() - core.last_step_time > timeout:
            wd_log.error("No engine step completed in %.1f s (last step %d, %d running request(s)); dumping thread "
                         "stacks", time.time() - core.last_step_time, core.steps, len(core.scheduler.running))
            faulthandler.dump_traceback(file=sys.stdout, all_threads=True)
            sys.stdout.flush()
            return


log.info("torch %s on %s; model=%s (bfloat16), max_num_seqs=64", torch.__version__, torch.cuda.get_device_name(),
         args.model)
sched = Scheduler()
core = EngineCore(sched, OutputProcessor(sched))
core.start()
threading.Thread(target=watchdog, args=(core, args.stall_timeout), name="Watchdog", daemon=True).start()
api.info("Uvicorn running on http://0.0.0.0:8000")

# first request: no stop strings, finishes on length
r1 = Request("cmpl-0001", "What is the answer?", 6, [])
sched.add(r1)
api.info('127.0.0.1:39110 - "POST /v1/completions HTTP/1.1" 200 OK')
r1.done.wait(30)
log.info("Finished request %s: %d tokens, finish_reason=%s, text=%r", r1.rid, r1.n_out, r1.finish_reason, r1.text)

# second request: stop string "\nQuestion:"
r2 = Request("cmpl-0002", "Q: What is the answer?\nA:", 64, ["\nQuestion:"])
sched.add(r2)
api.info('127.0.0.1:39114 - "POST /v1/completions HTTP/1.1" 200 OK')
log.info("Received request %s: max_tokens=64, stop=['\\nQuestion:']", r2.rid)
waited = 0.0
while not r2.done.wait(10.0):
    waited += 10.0
    api.warning("request %s still waiting for output after %.0f s", r2.rid, waited)
log.info("Finished request %s", r2.rid)
