"""tensor parallel size 4 on a machine with one GPU: rank 3 asks for cuda:3."""
import torch, common
log = common.log("launcher")
log.info("torch %s, %d visible GPU(s); tp_size=4", torch.__version__, torch.cuda.device_count())
for rank in range(4):
    log.info("placing shard %d on cuda:%d", rank, rank)
    torch.zeros(1, device=f"cuda:{rank}")
