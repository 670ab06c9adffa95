"""A config.json with a model_type this transformers release does not register."""
import json, os, tempfile, transformers, common
log = common.log("launcher")
d = tempfile.mkdtemp()
json.dump({"model_type": "glm9_moe_next", "architectures": ["Glm9MoeNextForCausalLM"], "hidden_size": 4096}, open(os.path.join(d, "config.json"), "w"))
log.info("transformers %s; loading config from %s", transformers.__version__, d)
from transformers import AutoConfig
cfg = AutoConfig.from_pretrained(d)
