"""Serving a local model folder whose config maps to the repository's own modeling code (auto_map)."""
import argparse, torch, transformers, common
from transformers import AutoConfig, AutoModelForCausalLM
log = common.log("engine")

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="/tmp/h4/moonlite-7b-instruct")
ap.add_argument("--dtype", default="auto")
ap.add_argument("--max-model-len", type=int, default=4096)
ap.add_argument("--trust-remote-code", action="store_true")
ap.add_argument("--port", type=int, default=8000)
args = ap.parse_args()
log.info("torch %s, transformers %s", torch.__version__, transformers.__version__)
log.info("non-default args: {'model': %r, 'max_model_len': %d, 'port': %d}", args.model, args.max_model_len, args.port)
log.info("Resolving model config for %s", args.model)
config = AutoConfig.from_pretrained(args.model, trust_remote_code=args.trust_remote_code)
log.info("Resolved architecture: %s", config.architectures)
model = AutoModelForCausalLM.from_pretrained(args.model, trust_remote_code=args.trust_remote_code)
log.info("Model loaded")
