"""Setup for the h4 probes (not itself a probe): writes small random checkpoints under OUTDIR (default /tmp/h4)."""
import argparse, json, os, sys, torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h4"
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)

# 1) a small Llama-architecture base model with a tokenizer that has no chat template
words = ["<unk>", "<s>", "</s>"] + [f"w{i}" for i in range(1997)] + \
    "the a of to and is in it you that he was for on are with as I his they be at one have this from".split()
vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
cfg = LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=8,
                  vocab_size=len(vocab), max_position_embeddings=2048, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
model = LlamaForCausalLM(cfg).to(torch.bfloat16)
base = os.path.join(out, "llama-base-260m")
model.save_pretrained(base)
hf_tok.save_pretrained(base)

# 2) a model folder that ships its own modeling code (auto_map), as hub repos with custom architectures do
remote = os.path.join(out, "moonlite-7b-instruct")
os.makedirs(remote, exist_ok=True)
with open(os.path.join(remote, "configuration_moonlite.py"), "w") as f:
    f.write('''from transformers import PretrainedConfig


class MoonliteConfig(PretrainedConfig):
    model_type = "moonlite"

    def __init__(self, hidden_size=256, num_hidden_layers=2, num_attention_heads=8, vocab_size=1000, **kwargs):
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.vocab_size = vocab_size
        super().__init__(**kwargs)
''')
with open(os.path.join(remote, "modeling_moonlite.py"), "w") as f:
    f.write('''import torch
from torch import nn
from transformers import PreTrainedModel
from .configuration_moonlite import MoonliteConfig


class MoonliteForCausalLM(PreTrainedModel):
    config_class = MoonliteConfig

    def __init__(self, config):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids, **kwargs):
        return self.lm_head(self.embed(input_ids))
''')
with open(os.path.join(remote, "config.json"), "w") as f:
    json.dump({"architectures": ["MoonliteForCausalLM"], "model_type": "moonlite",
               "auto_map": {"AutoConfig": "configuration_moonlite.MoonliteConfig",
                            "AutoModelForCausalLM": "modeling_moonlite.MoonliteForCausalLM"},
               "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 1000,
               "torch_dtype": "bfloat16"}, f, indent=2)

# 3) a .pt checkpoint written by a training script: state dict plus the run's argparse namespace
args = argparse.Namespace(lr=3e-4, warmup_steps=2000, seq_len=2048, model="llama-base-260m", seed=1234)
torch.save({"model": model.state_dict(), "args": args, "step": 120000}, os.path.join(out, "ckpt-step120000.pt"))
print("wrote", base, remote, os.path.join(out, "ckpt-step120000.pt"))
