"""Two models share one GPU: each engine process caps itself with torch.cuda.set_per_process_memory_fraction, then loads
its weights layer by layer."""
import argparse, time, torch, common
log = common.log("engine")

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="llama-8b-instruct")
ap.add_argument("--gpu-memory-fraction", type=float, default=0.1)
args = ap.parse_args()
total = torch.cuda.get_device_properties(0).total_memory
log.info("torch %s on %s, total memory %.2f GiB", torch.__version__, torch.cuda.get_device_name(), total / 2**30)
torch.cuda.set_per_process_memory_fraction(args.gpu_memory_fraction)
log.info("per-process memory fraction set to %.2f (%.2f GiB) for co-location", args.gpu_memory_fraction,
         args.gpu_memory_fraction * total / 2**30)
layers, hidden, inter, vocab = 32, 4096, 14336, 128256
log.info("Loading model %s: layers=%d hidden=%d intermediate=%d vocab=%d dtype=bfloat16", args.model, layers, hidden, inter, vocab)
t0 = time.time()
params = {"embed_tokens": torch.empty(vocab, hidden, device="cuda", dtype=torch.bfloat16)}
for i in range(layers):
    params[f"layers.{i}.qkv_proj"] = torch.empty(hidden + 2 * 1024, hidden, device="cuda", dtype=torch.bfloat16)
    params[f"layers.{i}.o_proj"] = torch.empty(hidden, hidden, device="cuda", dtype=torch.bfloat16)
    params[f"layers.{i}.gate_up_proj"] = torch.empty(2 * inter, hidden, device="cuda", dtype=torch.bfloat16)
    params[f"layers.{i}.down_proj"] = torch.empty(hidden, inter, device="cuda", dtype=torch.bfloat16)
    if i % 4 == 3:
        log.info("Loading safetensors checkpoint shards: %d/%d layers, %.2f GiB allocated", i + 1, layers,
                 torch.cuda.memory_allocated() / 2**30)
params["lm_head"] = torch.empty(vocab, hidden, device="cuda", dtype=torch.bfloat16)
log.info("Loading weights took %.2f seconds, %.2f GiB", time.time() - t0, torch.cuda.memory_allocated() / 2**30)
