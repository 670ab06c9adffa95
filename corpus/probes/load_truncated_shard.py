"""Loads a sharded safetensors checkpoint whose second shard was cut short by an interrupted copy."""
import json, os, sys, time, torch, common
from safetensors import safe_open
log = common.log("model_loader")

path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h3-ckpt"
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
cfg = json.load(open(os.path.join(path, "config.json")))
log.info("Loading config from %s: model_type=%s layers=%d hidden=%d vocab=%d", path, cfg["model_type"],
         cfg["num_hidden_layers"], cfg["hidden_size"], cfg["vocab_size"])
index = json.load(open(os.path.join(path, "model.safetensors.index.json")))
shards = sorted(set(index["weight_map"].values()))
log.info("Load weight begin. avail mem=%.2f GB", torch.cuda.mem_get_info()[0] / 1e9)
params = {}
t0 = time.time()
for i, shard in enumerate(shards, 1):
    with safe_open(os.path.join(path, shard), framework="pt", device="cuda:0") as f:
        for name in f.keys():
            params[name] = f.get_tensor(name)
    print(f"Loading safetensors checkpoint shards: {100 * i // len(shards):3d}% Completed | {i}/{len(shards)} [{time.time() - t0:.2f}s]", flush=True)
log.info("Load weight end. %d tensors, mem usage=%.2f GB", len(params), torch.cuda.memory_allocated() / 1e9)
