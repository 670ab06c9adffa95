"""A checkpoint renamed its layers (model.layers.N -> layers.N): missing and unexpected keys at load."""
import torch, common
log = common.log("loader")
model = torch.nn.ModuleDict({"model": torch.nn.ModuleDict({"layers": torch.nn.ModuleList([torch.nn.Linear(512, 512) for _ in range(2)])})}).cuda()
log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
sd = {k.replace("model.", "", 1): v.cpu() for k, v in model.state_dict().items()}
log.info("Loading weights from checkpoint (4 tensors)")
model.load_state_dict(sd, strict=True)
