"""A checkpoint stores fused gate_up expert weights; the model expects them split: size mismatch at load."""
import torch, common
log = common.log("loader")
class Expert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = torch.nn.Linear(1024, 2816, bias=False)
        self.up_proj = torch.nn.Linear(1024, 2816, bias=False)
        self.down_proj = torch.nn.Linear(2816, 1024, bias=False)
model = torch.nn.ModuleDict({f"experts_{i}": Expert() for i in range(4)}).cuda()
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
ckpt = {}
for i in range(4):
    ckpt[f"experts_{i}.gate_proj.weight"] = torch.randn(5632, 1024)  # fused gate_up stored under gate_proj
    ckpt[f"experts_{i}.up_proj.weight"] = torch.randn(2816, 1024)
    ckpt[f"experts_{i}.down_proj.weight"] = torch.randn(1024, 2816)
log.info("Loading safetensors checkpoint shards: 1/1")
model.load_state_dict(ckpt)
log.info("Load weight end.")
