"""Setup for run-h9.sh (not a probe): small GGUF files under DIR, written with llama.cpp's gguf-py through the helpers of
h7_make_gguf.py (its vocabulary, tensor writer and header).

  Llama-3.1-8B-Instruct-IQ4_KS.gguf   a llama model whose block weights carry a quantization type id (144) that mainline
                                      ggml does not define: the tensor-info type fields of an f16 file rewritten the way
                                      a fork's quantizer (ik_llama.cpp's IQ4_KS family) writes them
  llama3-8b-orpo-f16.gguf             a byte-level BPE (tokenizer.ggml.model = gpt2, pre = llama-bpe) model converted
                                      by a converter that found no merges in the new list-of-pairs tokenizer.json
                                      format, so the file has tokens but no tokenizer.ggml.merges
  open-llama-3b-v2-f16.gguf           a llama model with n_embd 3200 and 32 heads (head size 100), as OpenLLaMA 3B
"""
import os, struct, sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h9/models"
os.makedirs(out, exist_ok=True)

_argv, sys.argv = sys.argv, [sys.argv[0], out, "-"]
import h7_make_gguf as h7  # noqa: E402
sys.argv = _argv
h7.out = out
gguf = h7.gguf

which = set(sys.argv[2:])
def want(n):
    return not which or n in which


def retype(path, names, new_type):
    """Rewrite the ggml type field of the tensor infos named in `names` (n_dims, dims, type follow the name)."""
    data = bytearray(open(path, "rb").read())
    n = 0
    for name in names:
        key = struct.pack("<Q", len(name)) + name.encode()
        pos = data.find(key)
        if pos < 0:
            continue
        p = pos + len(key)
        n_dims = struct.unpack_from("<I", data, p)[0]
        p += 4 + 8 * n_dims
        struct.pack_into("<I", data, p, new_type)
        n += 1
    open(path, "wb").write(bytes(data))
    print(f"retyped {n} tensors of {path} to type {new_type}")


if want("ik"):
    name = "Llama-3.1-8B-Instruct-IQ4_KS.gguf"
    h7.write(name, n_embd=256, n_head=4, n_layer=4, n_ff=512, ctx=131072, title="Meta Llama 3.1 8B Instruct")
    names = [f"blk.{i}.{t}.weight" for i in range(4)
             for t in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")]
    retype(os.path.join(out, name), names, 144)

if want("bpe"):
    # GPT-2 style byte-level pieces: the 256 byte symbols, then merged words with the 'Ġ' (space) prefix
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs, k = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + k); k += 1
    toks = [chr(c) for c in cs]
    for w in h7.WORDS:
        for t in ("\u0120" + w, w):
            if t not in toks:
                toks.append(t)
    toks += ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    types = [1] * (len(toks) - 5) + [3] * 5
    n_embd, n_head, n_layer, n_ff, n_vocab = 256, 4, 4, 512, len(toks)
    path = os.path.join(out, "llama3-8b-orpo-f16.gguf")
    gw = gguf.GGUFWriter(path, "llama")
    h7.header(gw, "llama", title="Llama 3 8B ORPO", n_embd=n_embd, n_head=n_head, n_layer=n_layer, n_ff=n_ff,
              ctx=8192, n_vocab=n_vocab)
    gw.add_tokenizer_model("gpt2")
    gw.add_tokenizer_pre("llama-bpe")
    gw.add_token_list(toks)
    gw.add_token_types(types)
    gw.add_bos_token_id(toks.index("<|begin_of_text|>"))
    gw.add_eos_token_id(toks.index("<|eot_id|>"))
    gw.add_add_bos_token(True)
    gw.add_tensor("token_embd.weight", h7.w(n_vocab, n_embd))
    for i in range(n_layer):
        p = f"blk.{i}."
        gw.add_tensor(p + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
            gw.add_tensor(p + t + ".weight", h7.w(n_embd, n_embd))
        gw.add_tensor(p + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        gw.add_tensor(p + "ffn_gate.weight", h7.w(n_ff, n_embd))
        gw.add_tensor(p + "ffn_up.weight", h7.w(n_ff, n_embd))
        gw.add_tensor(p + "ffn_down.weight", h7.w(n_embd, n_ff))
    gw.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    gw.add_tensor("output.weight", h7.w(n_vocab, n_embd))
    gw.write_header_to_file()
    gw.write_kv_data_to_file()
    gw.write_tensors_to_file()
    gw.close()
    print(f"wrote {path} ({n_vocab} tokens, no merges)")

if want("head100"):
    h7.write("open-llama-3b-v2-f16.gguf", n_embd=3200, n_head=32, n_layer=2, n_ff=1024, ctx=2048,
             title="Open Llama 3b v2", cheap=True)
