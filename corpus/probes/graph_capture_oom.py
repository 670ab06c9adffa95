"""KV cache sized at 97% of free memory; CUDA graph capture for large batches then runs out."""
import torch, common
log = common.log("model_runner")
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
layer = torch.nn.Sequential(torch.nn.Linear(8192, 28672, bias=False), torch.nn.SiLU(), torch.nn.Linear(28672, 8192, bias=False)).cuda().half()
log.info("Load weight end. mem usage=%.2f GB", torch.cuda.memory_allocated() / 1e9)
free, total = torch.cuda.mem_get_info()
frac = 0.97
kv = torch.empty(int(free * frac), dtype=torch.uint8, device="cuda")
log.info("KV Cache is allocated. mem_fraction_static=%.2f, KV size: %.2f GB, avail mem=%.2f GB", frac, kv.numel() / 1e9, torch.cuda.mem_get_info()[0] / 1e9)
log.info("Capture cuda graph begin. avail mem=%.2f GB", torch.cuda.mem_get_info()[0] / 1e9)
graphs = {}
for bs in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]:
    x = torch.randn(bs * 64, 8192, device="cuda", dtype=torch.half)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = layer(x)
    graphs[bs] = (g, x, y)
    log.info("captured bs=%d", bs)
log.info("Capture cuda graph end.")
