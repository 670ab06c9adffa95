"""Serving from a training checkpoint (.pt): the engine reads the state dict out of the file with torch.load."""
import argparse, time, torch, common
from transformers import AutoConfig, AutoModelForCausalLM
log = common.log("engine")

ap = argparse.ArgumentParser()
ap.add_argument("--config", default="/tmp/h4/llama-base-260m")
ap.add_argument("--checkpoint", default="/tmp/h4/ckpt-step120000.pt")
args = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name() if dev == "cuda" else "cpu")
log.info("Loading config from %s", args.config)
cfg = AutoConfig.from_pretrained(args.config)
log.info("Initializing model: %s layers=%d hidden=%d", cfg.architectures, cfg.num_hidden_layers, cfg.hidden_size)
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
log.info("Loading weights from %s", args.checkpoint)
t0 = time.time()
ckpt = torch.load(args.checkpoint, map_location="cpu")
sd = ckpt["model"] if "model" in ckpt else ckpt
model.load_state_dict(sd, assign=True)
model.to(dev)
log.info("Loading weights took %.2f seconds", time.time() - t0)
