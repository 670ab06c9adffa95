"""The launcher hides every GPU (CUDA_VISIBLE_DEVICES empty); the first CUDA call fails."""
import os, torch, common
log = common.log("launcher")
log.info("CUDA_VISIBLE_DEVICES=%r; torch %s", os.environ.get("CUDA_VISIBLE_DEVICES"), torch.__version__)
log.info("initializing model on cuda")
x = torch.zeros(1024, device="cuda")
