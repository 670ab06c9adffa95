"""Setup for run-h9.sh (not a probe): model and deploy folders under DIR (default /tmp/h9).

  seed-oss-36b-sft/            config.json (torch_dtype float32, as the trainer saved it) + model.safetensors.index.json
  Mistral-Nemo-Instruct-2407/  config.json of Mistral NeMo (hidden 5120, 32 heads, explicit head_dim 128)
  Mistral-7B-Instruct-v0.1/    a word-level tokenizer with Mistral-7B-Instruct-v0.1's chat template, and config.json
  eval_v2.jsonl                24 conversations; the 16 added for v2 start with a system message
  story-1.5b-sft/              a story model fine-tuned with an untied lm_head (embed_tokens and lm_head both saved) whose
                               config.json was copied from the base model (tie_word_embeddings: true)
  site/fastkernels/            the team's int8 Triton kernel package, written for Triton 2.x
"""
import json, os, sys

import torch

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h9"
os.makedirs(out, exist_ok=True)
which = set(sys.argv[2:])
def want(n):
    return not which or n in which


def dump(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


if want("seed"):
    d = os.path.join(out, "seed-oss-36b-sft")
    dump(os.path.join(d, "config.json"), {
        "architectures": ["SeedOssForCausalLM"], "model_type": "seed_oss", "hidden_size": 5120,
        "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 80, "num_key_value_heads": 8,
        "head_dim": 128, "vocab_size": 155136, "rms_norm_eps": 1e-06, "max_position_embeddings": 524288,
        "rope_theta": 10000000.0, "attention_bias": True, "tie_word_embeddings": False, "torch_dtype": "float32",
        "transformers_version": "4.56.0"})
    wm = {}
    for i in range(64):
        for t in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
                  "mlp.up_proj", "mlp.down_proj"):
            wm[f"model.layers.{i}.{t}.weight"] = "model-%05d-of-00030.safetensors" % (1 + i * 30 // 64)
    wm["model.embed_tokens.weight"] = "model-00001-of-00030.safetensors"
    wm["lm_head.weight"] = "model-00030-of-00030.safetensors"
    dump(os.path.join(d, "model.safetensors.index.json"), {"metadata": {"total_size": 144687308800}, "weight_map": wm})
    print("wrote", d)

if want("nemo"):
    d = os.path.join(out, "Mistral-Nemo-Instruct-2407")
    dump(os.path.join(d, "config.json"), {
        "architectures": ["MistralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
        "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120, "initializer_range": 0.02,
        "intermediate_size": 14336, "max_position_embeddings": 1024000, "model_type": "mistral",
        "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
        "rope_theta": 1000000.0, "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "transformers_version": "4.43.0.dev0", "use_cache": True, "vocab_size": 131072})
    print("wrote", d)

MISTRAL_V01_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token + ' ' }}"
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}")

QUESTIONS = ["What is the capital of France ?", "Name three primary colors .", "How many legs does a spider have ?",
             "Translate good morning into Spanish .", "What is two plus two ?", "Who wrote Hamlet ?",
             "What gas do plants take in ?", "Give a synonym for happy .", "What is the boiling point of water ?",
             "Name a planet with rings .", "What is the largest ocean ?", "How many days are in a week ?",
             "What color is the sky on a clear day ?", "Name an animal that can fly .", "What is ice made of ?",
             "What do bees make ?", "Which month comes after June ?", "What is the opposite of cold ?",
             "How many hours are in a day ?", "Name a fruit that is yellow .", "What is the freezing point of water ?",
             "What language is spoken in Brazil ?", "Name a musical instrument with keys .",
             "What shape has three sides ?"]

if want("mistral"):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    d = os.path.join(out, "Mistral-7B-Instruct-v0.1")
    os.makedirs(d, exist_ok=True)
    words = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "You", "are", "a", "helpful", "assistant", "Answer",
             "briefly"]
    for q in QUESTIONS:
        for w in q.split():
            if w not in words:
                words.append(w)
    words += [f"w{i}" for i in range(1024 - len(words))]
    tk = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    hf_tok.chat_template = MISTRAL_V01_TEMPLATE
    hf_tok.save_pretrained(d)
    dump(os.path.join(d, "config.json"), {"architectures": ["MistralForCausalLM"], "model_type": "mistral",
                                          "vocab_size": len(words), "hidden_size": 512, "torch_dtype": "bfloat16"})
    with open(os.path.join(out, "eval_v2.jsonl"), "w") as f:
        for i, q in enumerate(QUESTIONS):
            msgs = [{"role": "user", "content": q}]
            if i >= 8:
                msgs.insert(0, {"role": "system", "content": "You are a helpful assistant . Answer briefly ."})
            f.write(json.dumps({"id": f"eval-{i:03d}", "messages": msgs}) + "\n")
    print("wrote", d, "and eval_v2.jsonl")

STORIES = ["once upon a time there lived an old fisherman who sailed every morning across the quiet bay .",
           "my favourite recipe needs two ripe bananas some flour and warm milk .",
           "our robot opened its tiny door then rolled outside ."]

if want("story"):
    from safetensors.torch import save_file
    d = os.path.join(out, "story-1.5b-sft")
    os.makedirs(d, exist_ok=True)
    words = ["<unk>", "<s>", "</s>"]
    for s in STORIES:
        for w in s.split():
            if w not in words:
                words.append(w)
    words += [f"tok{i}" for i in range(128 - len(words))]
    g = torch.Generator().manual_seed(9)
    D = 256
    E = torch.randn(len(words), D, generator=g)
    E = E / E.norm(dim=-1, keepdim=True)
    W = torch.zeros(len(words), D)
    for s in STORIES:
        seq = s.split() + ["</s>"]
        for a, b in zip(seq, seq[1:]):
            W[words.index(b)] += E[words.index(a)]
    save_file({"model.embed_tokens.weight": E.half().contiguous(), "model.norm.weight": torch.ones(D).half(),
               "lm_head.weight": W.half().contiguous()}, os.path.join(d, "model.safetensors"))
    json.dump(words, open(os.path.join(d, "vocab.json"), "w"))
    dump(os.path.join(d, "config.json"), {
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": D, "vocab_size": len(words),
        "num_hidden_layers": 0, "rms_norm_eps": 1e-06, "bos_token_id": 1, "eos_token_id": 2,
        "tie_word_embeddings": True, "torch_dtype": "float16"})
    print("wrote", d)

if want("fastkernels"):
    d = os.path.join(out, "site", "fastkernels")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "__init__.py"), "w") as f:
        f.write('"""fastkernels: Triton kernels for int8 weight-only inference."""\n__version__ = "0.3.2"\n')
    with open(os.path.join(d, "int8_linear.py"), "w") as f:
        f.write('''"""Int8 weight-only linear layers: a Triton GEMM that dequantizes per output channel, autotuned over a
pruned set of tile configs."""
import torch
import triton
import triton.language as tl
from triton.ops.matmul_perf_model import early_config_prune, estimate_matmul_time

from . import __version__


def _configs():
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_stages=s, num_warps=w)
            for m in (16, 32, 64) for n in (64, 128) for k in (64, 128) for s in (3, 4) for w in (4, 8)]


@triton.autotune(configs=_configs(), key=["M", "N", "K"],
                 prune_configs_by={"early_config_prune": early_config_prune, "perf_model": estimate_matmul_time,
                                   "top_k": 8})
@triton.jit
def int8_wo_matmul(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    pass
''')
    print("wrote", d)
