"""Setup for run-h6.sh (not a probe): model folders and prebuilt kernels under DIR (default /tmp/h6).

  llama-chatml-sft/     a small Llama checkpoint whose tokenizer gained two ChatML special tokens (ids 32000, 32001)
                        after the embedding was saved with 32000 rows
  qwen-tiny-sft/        a small Qwen2-style checkpoint exported without lm_head.weight (the trainer tied it to the
                        embedding) whose config.json says tie_word_embeddings=false
  story-awq-w4/         a word-level model whose lm_head is AWQ-packed int4 (GEMM layout, group 32)
  kernels/              the engine's prebuilt PTX for fused_add_rmsnorm, as shipped by a wheel built with a newer CUDA
                        toolkit than this driver supports
"""
import json, os, re, subprocess, sys
import numpy as np
import torch
from safetensors.torch import save_file

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h6"
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)


def llama_chatml():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    words = "the a of to and is in it you that he was for on are with as I his they be at one have this from or had by \
what how can do why who user assistant system hello please write tell me about explain short poem story GPU".split()
    base = ["<unk>", "<s>", "</s>"] + list(dict.fromkeys(words))
    base += [f"tok{i}" for i in range(32000 - len(base))]
    vocab = {w: i for i, w in enumerate(base)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=4, num_attention_heads=8,
                      num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096, bos_token_id=1,
                      eos_token_id=2, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    d = os.path.join(out, "llama-chatml-sft")
    model.save_pretrained(d)
    # the SFT recipe added ChatML markers to the tokenizer; the embedding was never resized before export
    hf_tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    hf_tok.chat_template = ("{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> "
                            "{% endfor %}{% if add_generation_prompt %}<|im_start|> assistant {% endif %}")
    hf_tok.save_pretrained(d)
    print("wrote", d, "tokenizer size", len(hf_tok), "config vocab", cfg.vocab_size)


def qwen_tied():
    d = os.path.join(out, "qwen-tiny-sft")
    os.makedirs(d, exist_ok=True)
    cfg = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
           "num_hidden_layers": 4, "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
           "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
           "tie_word_embeddings": False, "torch_dtype": "bfloat16", "bos_token_id": 151643, "eos_token_id": 151645}
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=2)
    H, I, L, kv = 896, 4864, 4, 2 * 64
    sd = {"model.embed_tokens.weight": torch.randn(151936, H, dtype=torch.bfloat16) * 0.02,
          "model.norm.weight": torch.ones(H, dtype=torch.bfloat16)}
    for i in range(L):
        p = f"model.layers.{i}."
        sd[p + "input_layernorm.weight"] = torch.ones(H, dtype=torch.bfloat16)
        sd[p + "post_attention_layernorm.weight"] = torch.ones(H, dtype=torch.bfloat16)
        sd[p + "self_attn.q_proj.weight"] = torch.randn(H, H, dtype=torch.bfloat16) * 0.02
        sd[p + "self_attn.q_proj.bias"] = torch.zeros(H, dtype=torch.bfloat16)
        sd[p + "self_attn.k_proj.weight"] = torch.randn(kv, H, dtype=torch.bfloat16) * 0.02
        sd[p + "self_attn.k_proj.bias"] = torch.zeros(kv, dtype=torch.bfloat16)
        sd[p + "self_attn.v_proj.weight"] = torch.randn(kv, H, dtype=torch.bfloat16) * 0.02
        sd[p + "self_attn.v_proj.bias"] = torch.zeros(kv, dtype=torch.bfloat16)
        sd[p + "self_attn.o_proj.weight"] = torch.randn(H, H, dtype=torch.bfloat16) * 0.02
        sd[p + "mlp.gate_proj.weight"] = torch.randn(I, H, dtype=torch.bfloat16) * 0.02
        sd[p + "mlp.up_proj.weight"] = torch.randn(I, H, dtype=torch.bfloat16) * 0.02
        sd[p + "mlp.down_proj.weight"] = torch.randn(H, I, dtype=torch.bfloat16) * 0.02
    # the trainer saved with tied embeddings, so lm_head.weight was dropped from the export
    save_file(sd, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    print("wrote", d, len(sd), "tensors")


STORY = ("The quick brown fox jumps over a lazy dog while seven bright stars watch silently from distant hills "
         "and every river sings softly to sleeping towns .").split()


def story_awq():
    d = os.path.join(out, "story-awq-w4")
    os.makedirs(d, exist_ok=True)
    fill = ["<pad>", "<eos>"] + [f"w{i}" for i in range(512)]
    words = list(dict.fromkeys(STORY)) + fill
    words = words[:256]
    V, H, G = len(words), 256, 32
    idx = {w: i for i, w in enumerate(words)}
    g = torch.Generator().manual_seed(1)
    emb = torch.randn(V, H, generator=g)
    emb = emb / emb.norm(dim=1, keepdim=True)
    lm = torch.randn(V, H, generator=g) * 0.01
    for a, b in zip(STORY, STORY[1:] + ["<eos>"]):
        lm[idx[b]] += 4.0 * emb[idx[a]]
    # AWQ (GEMM) int4: weight [in=H, out=V]; groups of G along H; asymmetric with zero points; 8 values per int32
    # packed along the output dim in AWQ's interleaved order
    W = lm.t().contiguous()  # [H, V]
    Wg = W.view(H // G, G, V)
    wmax, wmin = Wg.amax(1), Wg.amin(1)
    scales = (wmax - wmin).clamp(min=1e-5) / 15.0
    zeros = torch.round(-wmin / scales).clamp(0, 15)
    q = torch.clamp(torch.round(Wg / scales[:, None, :]) + zeros[:, None, :], 0, 15).to(torch.int32).view(H, V)
    order = [0, 2, 4, 6, 1, 3, 5, 7]

    def pack(t):  # [R, C] int4 -> [R, C/8] int32
        t = t.view(t.shape[0], -1, 8)
        outp = torch.zeros(t.shape[0], t.shape[1], dtype=torch.int64)
        for j in range(8):
            outp |= (t[:, :, order[j]].to(torch.int64) & 0xF) << (4 * j)
        outp = torch.where(outp >= 2**31, outp - 2**32, outp)
        return outp.to(torch.int32)

    sd = {"embed_tokens.weight": emb.half(), "lm_head.qweight": pack(q), "lm_head.qzeros": pack(zeros.to(torch.int32)),
          "lm_head.scales": scales.half()}
    save_file(sd, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    json.dump({"model_type": "storylm", "hidden_size": H, "vocab_size": V, "eos_token_id": idx["<eos>"],
               "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": G, "zero_point": True,
                                       "version": "gemm"}},
              open(os.path.join(d, "config.json"), "w"), indent=2)
    json.dump(words, open(os.path.join(d, "vocab.json"), "w"))
    print("wrote", d, "vocab", V)


RMSNORM = r'''
extern "C" __global__ void fused_add_rmsnorm(float* __restrict__ x, float* __restrict__ res, const float* __restrict__ w,
                                             int hidden, float eps) {
  extern __shared__ float red[];
  float* row = x + (size_t)blockIdx.x * hidden;
  float* rrow = res + (size_t)blockIdx.x * hidden;
  float acc = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) { float v = row[i] + rrow[i]; rrow[i] = v; acc += v * v; }
  red[threadIdx.x] = acc; __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s]; __syncthreads(); }
  float inv = rsqrtf(red[0] / hidden + eps);
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) row[i] = rrow[i] * inv * w[i];
}
'''


def kernels():
    d = os.path.join(out, "kernels")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "fused_add_rmsnorm.cu")
    open(src, "w").write(RMSNORM)
    ptx = os.path.join(d, "fused_add_rmsnorm.sm90.ptx")
    subprocess.run(["nvcc", "-ptx", "-arch=compute_90", "-o", ptx, src], check=True)
    drv = torch.cuda.driver_version() if hasattr(torch.cuda, "driver_version") else None
    if drv is None:
        import ctypes
        v = ctypes.c_int()
        ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(v))
        drv = v.value
    major, minor = drv // 1000, (drv % 1000) // 10
    # the wheel's kernels were generated by the next toolkit release (one PTX ISA minor version above the driver's)
    text = open(ptx).read()
    text = re.sub(r"^\.version (\d+)\.(\d+)", lambda m: f".version {m.group(1)}.{minor + 1}", text, flags=re.M)
    text = re.sub(r"release \d+\.\d+, V\d+\.\d+\.\d+", f"release {major}.{minor + 1}, V{major}.{minor + 1}.66", text)
    open(ptx, "w").write(text)
    os.remove(src)
    print("wrote", ptx, "for driver CUDA", f"{major}.{minor}", re.search(r"^\.version .*$", text, re.M).group(0))


which = set(sys.argv[2:])
for name, fn in [("chatml", llama_chatml), ("tied", qwen_tied), ("awq", story_awq), ("kernels", kernels)]:
    if not which or name in which:
        try:
            fn()
        except Exception as e:  # keep going: each probe checks its own inputs
            print("setup", name, "failed:", repr(e))
