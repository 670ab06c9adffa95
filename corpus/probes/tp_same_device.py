"""Two tensor-parallel workers both bound to cuda:0 (the engine's --device flag is passed to every worker): NCCL init."""
import argparse, datetime, os, torch, torch.distributed as dist, common

ap = argparse.ArgumentParser()
ap.add_argument("--device", default="cuda:0")
ap.add_argument("--tp-size", type=int, default=2)
args = ap.parse_args()
rank = int(os.environ["RANK"])
log = common.log(f"worker[TP{rank}]")
device = torch.device(args.device)
torch.cuda.set_device(device)
log.info("torch %s, nccl %s, tp_size=%d, device=%s (%s)", torch.__version__, ".".join(map(str, torch.cuda.nccl.version())),
         args.tp_size, device, torch.cuda.get_device_name(device))
log.info("Init torch distributed begin.")
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=60), device_id=device)
x = torch.ones(1024, device=device)
dist.all_reduce(x)
log.info("Init torch distributed ends. all_reduce check: %.1f", x[0].item())
log.info("Load weight begin. avail mem=%.2f GB", torch.cuda.mem_get_info(device)[0] / 1e9)
dist.destroy_process_group()
