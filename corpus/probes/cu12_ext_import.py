"""Engine start-up that imports its compiled custom-ops extension (paged attention, rms_norm, rotary). The extension
came from a wheel built against the CUDA 12 toolkit (cu12x); this machine has CUDA 13 and torch cu130."""
import argparse, os, sys
import common

p = argparse.ArgumentParser()
p.add_argument("--model", default="meta-llama/Llama-3.1-8B-Instruct")
p.add_argument("--ext-dir", required=True)
args = p.parse_args()
log = common.log("engine")
sys.path.insert(0, args.ext_dir)
import torch
log.info("fastserve 0.9.2 (built for cu12x), torch %s (CUDA %s), device %s", torch.__version__, torch.version.cuda,
         torch.cuda.get_device_name())
log.info("engine args: model=%s dtype=bfloat16 max_model_len=8192 gpu_memory_utilization=0.9", args.model)
log.info("platform: cuda, compute capability %s", ".".join(map(str, torch.cuda.get_device_capability())))
log.info("loading custom ops (fastserve._C)")
from fastserve import _C  # noqa: E402
log.info("custom ops: %s", _C)
