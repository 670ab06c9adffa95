"""Overlapped decode: the next step's gather kernel waits on a ready flag that the sampler kernel publishes.
A step watchdog dumps all threads' stacks if one decode step takes longer than --step-timeout seconds."""
import argparse, faulthandler, sys, time, torch, triton, triton.language as tl, common
log = common.log("scheduler")


@triton.jit
def gather_next_tokens(flag_ptr, step, src_ptr, dst_ptr, N: tl.constexpr):
    while tl.atomic_add(flag_ptr, 0) < step:
        pass
    offs = tl.arange(0, N)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs))


@triton.jit
def publish_tokens(flag_ptr, step, logits_ptr, out_ptr, V: tl.constexpr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, V)
    x = tl.load(logits_ptr + row * V + offs)
    tl.store(out_ptr + row, tl.argmax(x, 0).to(tl.int32))
    tl.debug_barrier()
    if row == N - 1:
        tl.atomic_xchg(flag_ptr, step)


ap = argparse.ArgumentParser()
ap.add_argument("--enable-overlap-schedule", action="store_true")
ap.add_argument("--step-timeout", type=int, default=20)
args = ap.parse_args()
B, V, H = 8, 1024, 256
log.info("server_args: enable_overlap_schedule=%s max_running_requests=%d watchdog step timeout=%ds",
         args.enable_overlap_schedule, B, args.step_timeout)
torch.manual_seed(0)
emb = torch.randn(V, H, device="cuda")
flag = torch.zeros(1, device="cuda", dtype=torch.int32)
sampled = torch.zeros(B, device="cuda", dtype=torch.int32)
next_ids = torch.zeros(B, device="cuda", dtype=torch.int32)
log.info("Load weight end. avail mem=%.2f GB", torch.cuda.mem_get_info()[0] / 1e9)
ids = torch.randint(0, V, (B,), device="cuda", dtype=torch.int32)
log.info("Prefill batch, #new-seq: %d, #new-token: %d", B, B * 37)
for step in range(0, 64):
    faulthandler.dump_traceback_later(args.step_timeout, exit=True)
    t0 = time.time()
    logits = emb[ids.long()] @ emb.T
    if args.enable_overlap_schedule and step >= 2:
        # overlap (once the batch is steady): queue the gather for this step first, then publish this step's tokens
        gather_next_tokens[(1,)](flag, step + 1, sampled, next_ids, N=B)
        publish_tokens[(B,)](flag, step + 1, logits, sampled, V=V, N=B)
    else:
        publish_tokens[(B,)](flag, step + 1, logits, sampled, V=V, N=B)
        gather_next_tokens[(1,)](flag, step + 1, sampled, next_ids, N=B)
    ids = next_ids.clone()
    toks = ids.tolist()
    faulthandler.cancel_dump_traceback_later()
    if step % 8 == 0 or step < 3:
        log.info("Decode batch, #running-req: %d, #token: %d, step %d took %.1f ms", B, B * (38 + step), step,
                 (time.time() - t0) * 1e3)
log.info("all requests finished")
