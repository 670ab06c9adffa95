"""A torch.compile'd decoder MLP; the image has no C compiler on PATH, so Triton cannot build its launcher while Inductor compiles."""
import time, torch, common
log = common.log("engine")


class RMSNorm(torch.nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(v + self.eps)).to(x.dtype) * self.weight


class Block(torch.nn.Module):
    def __init__(self, d=1024, inter=2816):
        super().__init__()
        self.norm = RMSNorm(d)
        self.gate_up = torch.nn.Linear(d, 2 * inter, bias=False)
        self.down = torch.nn.Linear(inter, d, bias=False)

    def forward(self, x):
        g, u = self.gate_up(self.norm(x)).chunk(2, -1)
        return x + self.down(torch.nn.functional.silu(g) * u)


log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
log.info("Loading model: 4 layers, hidden=1024, dtype=bfloat16")
model = torch.nn.Sequential(*[Block() for _ in range(4)]).cuda().to(torch.bfloat16).eval()
log.info("Load weight end. mem usage=%.2f GB", torch.cuda.memory_allocated() / 1e9)
log.info("Compiling the model with torch.compile (backend=inductor, dynamic=False)")
compiled = torch.compile(model, backend="inductor", dynamic=False)
for bs in (1, 2, 4, 8):
    t0 = time.time()
    with torch.no_grad():
        out = compiled(torch.randn(bs, 1024, device="cuda", dtype=torch.bfloat16))
    torch.cuda.synchronize()
    log.info("torch.compile warm-up bs=%d took %.1f s", bs, time.time() - t0)
log.info("Compilation done; starting the server")
