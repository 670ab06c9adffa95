"""Two data-parallel scheduler ranks that agree on each step's batch over a gloo CPU group before running their models."""
import datetime, os, time, torch, torch.distributed as dist, common

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
log = common.log(f"scheduler[DP{rank}]")
dev = "cuda" if torch.cuda.is_available() else "cpu"
log.info("torch %s, dp_size=%d, device=%s", torch.__version__, world, torch.cuda.get_device_name() if dev == "cuda" else "cpu")
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
log.info("Init torch distributed ends (gloo cpu group)")
torch.manual_seed(rank)
w = torch.randn(2048, 2048, device=dev, dtype=torch.bfloat16 if dev == "cuda" else torch.float32) * 0.02
# each rank serves its own requests: (request id, tokens still to generate)
reqs = {f"r{rank}-{i}": (24 if rank == 0 else 6) + 3 * i for i in range(4)}
log.info("The server is fired up and ready to roll! %d requests queued", len(reqs))
step = 0
while reqs:
    # agree on the global batch: every rank contributes its number of running requests
    n = torch.tensor([len(reqs)], dtype=torch.int64)
    dist.all_reduce(n)
    x = torch.randn(len(reqs), 2048, device=dev, dtype=w.dtype)
    for _ in range(4):
        x = torch.tanh(x @ w)
    if dev == "cuda":
        torch.cuda.synchronize()
    for r in list(reqs):
        reqs[r] -= 1
        if reqs[r] == 0:
            del reqs[r]
            log.info("Finish request %s", r)
    if step % 5 == 0:
        log.info("Decode batch, #running-req: %d, #global-running-req: %d, gen throughput (token/s): %.2f, #queue-req: 0",
                 len(reqs), int(n.item()), len(reqs) * 41.3)
    step += 1
log.info("All local requests finished at step %d; waiting for new requests", step)
while True:
    time.sleep(1)
