"""A torch serving engine for int8 weight-only checkpoints; its GEMM kernels come from the team's 'fastkernels' package
(Triton kernels with a perf-model-pruned autotuner), installed next to the engine (written by h9_setup.py into a
folder on PYTHONPATH)."""
import argparse, time
import torch
import common

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="Llama-3.1-8B-Instruct-int8wo")
ap.add_argument("--quantization", default="int8_wo")
ap.add_argument("--port", type=int, default=8000)
args = ap.parse_args()
log = common.log("engine")

import triton  # noqa: E402

log.info("starting engine: model=%s quantization=%s port=%d", args.model, args.quantization, args.port)
log.info("torch %s (CUDA %s), triton %s, device %s", torch.__version__, torch.version.cuda, triton.__version__,
         torch.cuda.get_device_name())
t0 = time.time()
log.info("loading quantization backend for %s", args.quantization)
from fastkernels import int8_linear  # noqa: E402

log.info("fastkernels %s ready in %.2fs", int8_linear.__version__, time.time() - t0)
