"""Two ranks; rank 1 hits a device-side assert in decode, rank 0 waits in all_reduce until the watchdog fires."""
import datetime, os, torch, torch.distributed as dist, common
log = common.log(f"worker[rank={os.environ.get('RANK')}]")
rank = int(os.environ["RANK"])
torch.cuda.set_device(rank)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=25), device_id=torch.device("cuda", rank))
log.info("torch %s, nccl %s on %s, tp_size=2", torch.__version__, ".".join(map(str, torch.cuda.nccl.version())), torch.cuda.get_device_name())
emb = torch.nn.Embedding(32000, 1024, device="cuda")
x = torch.zeros(8, 1024, device="cuda")
for step in range(6):
    ids = torch.arange(8, device="cuda") + (40000 if (rank == 1 and step == 4) else 0)
    y = emb(ids) + x
    dist.all_reduce(y)
    log.info("decode step %d ok (%.2f)", step, y.sum().item())
dist.destroy_process_group()
