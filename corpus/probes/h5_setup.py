"""Setup for run-h5.sh (not a probe): a remote-code model folder and a LoRA adapter checkpoint under DIR."""
import json, os, sys
import torch
from safetensors.torch import save_file

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h5"

# 1. a Kimi-K2-style model folder whose modeling code came with the checkpoint (trust_remote_code)
m = os.path.join(out, "kimi-k2-mini")
os.makedirs(m, exist_ok=True)
cfg = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV3Config",
                 "AutoModel": "modeling_deepseek.DeepseekV3Model",
                 "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"},
    "model_type": "kimi_k2", "vocab_size": 4096, "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 2,
}
json.dump(cfg, open(os.path.join(m, "config.json"), "w"), indent=2)
open(os.path.join(m, "configuration_deepseek.py"), "w").write('''# coding=utf-8
try:
    from transformers.configuration_utils import PretrainedConfig
except ImportError:
    from transformers.configuration_utils import PreTrainedConfig as PretrainedConfig


class DeepseekV3Config(PretrainedConfig):
    model_type = "kimi_k2"
    keys_to_ignore_at_inference = ["past_key_values"]

    def __init__(self, vocab_size=163840, hidden_size=7168, intermediate_size=18432, num_hidden_layers=61,
                 num_attention_heads=64, max_position_embeddings=4096, rms_norm_eps=1e-6, **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.max_position_embeddings = max_position_embeddings
        self.rms_norm_eps = rms_norm_eps
        super().__init__(**kwargs)
''')
open(os.path.join(m, "modeling_deepseek.py"), "w").write('''# coding=utf-8
""" PyTorch DeepSeek model."""
import math
from typing import List, Optional, Tuple, Union

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn

from transformers.activations import ACT2FN
from transformers.modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast
from transformers.modeling_utils import PreTrainedModel
from transformers.utils import logging
from transformers.utils.import_utils import is_torch_fx_available

from .configuration_deepseek import DeepseekV3Config

if is_torch_fx_available():
    _prepare_4d_causal_attention_mask = torch.fx.wrap(lambda *a, **k: None)

logger = logging.get_logger(__name__)


class DeepseekV3PreTrainedModel(PreTrainedModel):
    config_class = DeepseekV3Config
    base_model_prefix = "model"


class DeepseekV3Model(DeepseekV3PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.post_init()


class DeepseekV3ForCausalLM(DeepseekV3PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.model = DeepseekV3Model(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()
''')
print("wrote", m)

# 2. a LoRA adapter as a fine-tuning run saved it (float32)
a = os.path.join(out, "sql-lora")
os.makedirs(a, exist_ok=True)
r, hidden, layers = 16, 2048, 4
json.dump({"peft_type": "LORA", "r": r, "lora_alpha": 32, "target_modules": ["q_proj", "v_proj"],
           "base_model_name_or_path": "llama-tiny-2b", "task_type": "CAUSAL_LM"},
          open(os.path.join(a, "adapter_config.json"), "w"), indent=2)
g = torch.Generator().manual_seed(0)
t = {}
for i in range(layers):
    for mod in ("q_proj", "v_proj"):
        t[f"base_model.model.model.layers.{i}.self_attn.{mod}.lora_A.weight"] = torch.randn(r, hidden, generator=g) * 0.01
        t[f"base_model.model.model.layers.{i}.self_attn.{mod}.lora_B.weight"] = torch.randn(hidden, r, generator=g) * 0.01
save_file(t, os.path.join(a, "adapter_model.safetensors"))
print("wrote", a)
