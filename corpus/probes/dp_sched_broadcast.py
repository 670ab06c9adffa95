"""Two engine ranks (data-parallel attention, one GPU here) share one scheduler: rank 0 decides each step's batch and
broadcasts the scheduled token ids over the CPU (gloo) group; rank 1 sizes its receive buffer from its own copy of the
running list. Rank 1 retires finished requests one step later than rank 0."""
import os, time
import torch, torch.distributed as dist
import common

rank = int(os.environ["RANK"]); world = int(os.environ["WORLD_SIZE"])
log = common.log(f"engine.rank{rank}")
dist.init_process_group("gloo", rank=rank, world_size=world)
log.info("rank %d/%d: gloo CPU group ready (TORCH_DISTRIBUTED_DEBUG=%s), device %s", rank, world,
         os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF"), torch.cuda.get_device_name())
torch.manual_seed(0)
w = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16) * 0.02
# request id -> remaining tokens
running = {f"req-{i}": n for i, n in enumerate([5, 9, 12, 7, 16, 3, 11, 8])}
if rank == 0:
    log.info("scheduler: %d requests admitted (max_num_seqs=8)", len(running))
finished_last_step = []
for step in range(1, 20):
    if rank == 0:
        for r in [r for r, n in running.items() if n == 0]:
            del running[r]
            log.info("step %d: %s finished", step, r)
    else:
        for r in finished_last_step:
            del running[r]
        finished_last_step = [r for r, n in running.items() if n == 0]
    batch = torch.arange(len(running), dtype=torch.long) if rank == 0 else torch.empty(len(running), dtype=torch.long)
    dist.broadcast(batch, src=0)
    h = torch.randn(batch.numel(), 1024, device="cuda", dtype=torch.bfloat16)
    h = h @ w
    torch.cuda.synchronize()
    for r in running:
        running[r] -= 1
    if rank == 0 and step % 2 == 1:
        log.info("decode step %d: batch=%d tokens, running=%d", step, batch.numel(), len(running))
dist.destroy_process_group()
