"""Tensor-parallel worker start-up: torch.distributed with NCCL, on a host whose launch environment names the NIC to use."""
import datetime, os, torch, torch.distributed as dist, common

rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
log = common.log(f"worker[TP{rank}]")
torch.cuda.set_device(local)
dev = torch.device("cuda", local)
log.info("torch %s, nccl %s, tp_size=%d, device=%s (%s)", torch.__version__, ".".join(map(str, torch.cuda.nccl.version())),
         world, dev, torch.cuda.get_device_name(dev))
log.info("env: NCCL_SOCKET_IFNAME=%s NCCL_IB_DISABLE=%s MASTER_ADDR=%s MASTER_PORT=%s", os.environ.get("NCCL_SOCKET_IFNAME"),
         os.environ.get("NCCL_IB_DISABLE"), os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT"))
log.info("Init torch distributed begin.")
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=60), device_id=dev)
x = torch.ones(4096, device=dev)
dist.all_reduce(x)
torch.cuda.synchronize()
log.info("Init torch distributed ends. all_reduce check: %.1f", x[0].item())
log.info("Load weight begin. avail mem=%.2f GB", torch.cuda.mem_get_info(dev)[0] / 1e9)
dist.destroy_process_group()
