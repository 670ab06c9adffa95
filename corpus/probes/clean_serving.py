"""Control: a small generation loop that finishes, with a deprecation warning on the way."""
import warnings, torch, common
log = common.log("engine")
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
warnings.warn("`torch_dtype` is deprecated! Use `dtype` instead!", FutureWarning)
m = torch.nn.Linear(512, 512).cuda()
x = torch.randn(4, 512, device="cuda")
for step in range(4):
    x = torch.tanh(m(x))
    log.info("decode step %d", step)
log.info("generation finished: 4 tokens, max |x|=%.3f", x.abs().max().item())
