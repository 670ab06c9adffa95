"""Loads a .bin checkpoint fully into host RAM (all shards kept) before moving it to the GPU; the container's memory limit is smaller."""
import os, resource, time, torch, common
log = common.log("model_loader")
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
n_shards, shard_gib = 8, 1
log.info("Loading model from /models/llama-style-8b: %d shards (pytorch_model-0000N-of-0000%d.bin), load_format=pt, device_map=None",
         n_shards, n_shards)
state = {}
for i in range(1, n_shards + 1):
    t0 = time.time()
    # torch.load(map_location="cpu") materialises every tensor in host memory
    state[f"shard{i}"] = torch.empty(shard_gib * 2**29, dtype=torch.float16).normal_()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"Loading pt checkpoint shards: {100 * i // n_shards:3d}% Completed | {i}/{n_shards} [{time.time() - t0:.2f}s/it] (rss={rss:.1f} GiB)", flush=True)
log.info("moving weights to cuda:0")
for k in list(state):
    state[k] = state[k].cuda()
log.info("Load weight end. mem usage=%.2f GB", torch.cuda.memory_allocated() / 1e9)
