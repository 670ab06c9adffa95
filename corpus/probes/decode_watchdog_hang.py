"""A split-K reduction kernel where each program spins until the next split publishes its partial sum. Correct while every
program is resident on the GPU at once; past that grid size the waiting programs occupy the SMs and the last ones never run."""
import faulthandler, os, signal, sys, threading, time, torch, triton, triton.language as tl, common
log = common.log("scheduler")


@triton.jit
def splitk_chain_reduce(part_ptr, flag_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.num_programs(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.load(part_ptr + pid * BLOCK + offs)
    if pid < n - 1:
        ready = tl.atomic_add(flag_ptr + pid + 1, 0)
        while ready == 0:
            ready = tl.atomic_add(flag_ptr + pid + 1, 0)
        acc += tl.load(out_ptr + (pid + 1) * BLOCK + offs, volatile=True)
    tl.store(out_ptr + pid * BLOCK + offs, acc)
    tl.debug_barrier()
    tl.atomic_xchg(flag_ptr + pid, 1)


class Watchdog(threading.Thread):
    def __init__(self, timeout):
        super().__init__(daemon=True)
        self.watchdog_timeout, self.soft, self.last = timeout, False, time.time()

    def feed(self):
        self.last = time.time()

    def run(self):
        while True:
            time.sleep(1)
            if time.time() - self.last > self.watchdog_timeout:
                log.error(f"Scheduler watchdog timeout ({self.watchdog_timeout=}, {self.soft=})")
                print("Scheduler debug info: thread stacks", flush=True)
                faulthandler.dump_traceback(file=sys.stdout, all_threads=True)
                sys.stdout.flush()
                os.kill(os.getpid(), signal.SIGKILL)


log.info("torch %s, triton %s on %s", torch.__version__, triton.__version__, torch.cuda.get_device_name())
BLOCK = 128
wd = Watchdog(30)
wd.start()
log.info("The server is fired up and ready to roll!")
running, tokens = 8, 4096
for it in range(200):
    splits = running * (tokens // 256)
    part = torch.ones(splits * BLOCK, device="cuda")
    flags = torch.zeros(splits, device="cuda", dtype=torch.int32)
    out = torch.empty_like(part)
    splitk_chain_reduce[(splits,)](part, flags, out, BLOCK=BLOCK, num_warps=1)
    torch.cuda.synchronize()
    if it % 5 == 0:
        log.info(f"Decode batch, #running-req: {running}, #token: {running * tokens}, token usage: {running * tokens / 1e6:.2f}, "
                 f"cuda graph: False, gen throughput (token/s): {running * 31.7:.2f}, #queue-req: 0")
    wd.feed()
    running += 8
