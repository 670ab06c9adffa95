"""A MoE layer whose router copies per-expert token counts to the host (.tolist()); fine in eager mode, illegal inside CUDA graph capture."""
import torch, common
log = common.log("cuda_graph_runner")


class MoE(torch.nn.Module):
    def __init__(self, d=1024, inter=512, experts=8, top_k=2):
        super().__init__()
        self.router = torch.nn.Linear(d, experts, bias=False)
        self.w1 = torch.nn.Parameter(torch.randn(experts, d, inter) * 0.02)
        self.w2 = torch.nn.Parameter(torch.randn(experts, inter, d) * 0.02)
        self.experts, self.top_k = experts, top_k

    def forward(self, x):
        w, idx = torch.topk(torch.softmax(self.router(x), -1), self.top_k, dim=-1)
        counts = torch.bincount(idx.flatten(), minlength=self.experts).tolist()
        order = torch.argsort(idx.flatten())
        xs = x.repeat_interleave(self.top_k, 0)[order]
        out = torch.empty_like(xs)
        start = 0
        for e, n in enumerate(counts):
            if n:
                seg = xs[start:start + n]
                out[start:start + n] = torch.nn.functional.silu(seg @ self.w1[e]) @ self.w2[e]
            start += n
        y = torch.empty_like(out)
        y[order] = out
        return (y.view(-1, self.top_k, x.shape[-1]) * w[..., None]).sum(1)


log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
model = torch.nn.Sequential(MoE(), MoE()).cuda().half().eval()
log.info("Load weight end. type=MoE, dtype=torch.float16, mem usage=%.2f GB", torch.cuda.memory_allocated() / 1e9)
with torch.no_grad():
    y = model(torch.randn(4, 1024, device="cuda", dtype=torch.half))
log.info("eager warm-up ok (|y|=%.4f)", y.float().abs().mean().item())
bs_list = [1, 2, 4, 8, 16]
log.info("Capture cuda graph begin. This can take up to several minutes. avail mem=%.2f GB", torch.cuda.mem_get_info()[0] / 1e9)
log.info("Capture cuda graph bs %s", bs_list)
graphs = {}
pool = None
with torch.no_grad():
    for bs in reversed(bs_list):
        x = torch.randn(bs, 1024, device="cuda", dtype=torch.half)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                model(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            y = model(x)
        pool = g.pool()
        graphs[bs] = (g, x, y)
log.info("Capture cuda graph end. avail mem=%.2f GB", torch.cuda.mem_get_info()[0] / 1e9)
