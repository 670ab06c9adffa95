"""Offline batch inference with transformers: a checkpoint folder that ships its own modeling code."""
import argparse, time, torch, transformers, common
from transformers import AutoConfig, AutoModelForCausalLM
log = common.log("batch_infer")

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True)
ap.add_argument("--trust-remote-code", action="store_true")
ap.add_argument("--dtype", default="bfloat16")
args = ap.parse_args()
log.info("torch %s, transformers %s, device %s", torch.__version__, transformers.__version__, torch.cuda.get_device_name())
log.info("Loading config from %s (trust_remote_code=%s)", args.model, args.trust_remote_code)
cfg = AutoConfig.from_pretrained(args.model, trust_remote_code=args.trust_remote_code)
log.info("model_type=%s architectures=%s layers=%d hidden=%d vocab=%d", cfg.model_type, cfg.architectures,
         cfg.num_hidden_layers, cfg.hidden_size, cfg.vocab_size)
log.info("Building model %s", cfg.architectures[0])
t0 = time.time()
model = AutoModelForCausalLM.from_config(cfg, trust_remote_code=args.trust_remote_code, dtype=getattr(torch, args.dtype))
model = model.to("cuda").eval()
log.info("Model ready in %.2f s", time.time() - t0)
