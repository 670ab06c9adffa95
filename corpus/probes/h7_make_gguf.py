"""Setup for run-h7.sh (not a probe): small GGUF files under DIR, written with llama.cpp's gguf-py.

  tiny-chat-f16.gguf                 a healthy 4-layer llama chat model (n_embd 256), the base of the LoRA probe
  lora-chat-assistant-f16.gguf       a LoRA adapter (rank 16) trained on a 512-wide base ("Small Chat 120M")
  storyteller-7b-f16-0000N-of-00003  a 12-layer llama split in three shards (gguf-split layout); shard 2 is not copied
                                     to the serving folder by the download step of the probe (see llama_split_shard.sh)
  qwen4-mini-f16.gguf                a model tagged general.architecture = qwen4 (converted by a newer converter)
  story-2g-f16.gguf                  a 2.1 GiB, 32-layer llama (n_embd 1536) for the memory-limited container probe
"""
import os, sys
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("GGUF_PY", os.path.join(here, "..", "..", ".probe-src", "llama.cpp", "gguf-py")))
import gguf  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h7/models"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)

WORDS = ("the a of to and in is it you that he was for on are with as I his they be at one have this from or had by "
         "not word but what some we can out other were all there when up use your how said an each she which do their "
         "time if will way about many then them write would like so these her long make thing see him two has look more "
         "day could go come did number sound no most people my over know water than call first who may down side been "
         "now find any new work part take get place made live where after back little only round man year came show "
         "every good me give our under name very through just form sentence great think say help low line differ turn").split()

CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def vocab():
    toks, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [2, 3, 3]
    for i in range(256):
        toks.append("<0x%02X>" % i); scores.append(0.0); types.append(6)
    for ch in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'\":;-()":
        toks.append(ch); scores.append(-1000.0); types.append(1)
    toks.append("\u2581"); scores.append(-999.0); types.append(1)
    seen = set(toks)
    for i, w in enumerate(WORDS):
        t = "\u2581" + w
        if t in seen:
            continue
        seen.add(t); toks.append(t); scores.append(-1.0 - i * 0.01); types.append(1)
    for t in ("<|im_start|>", "<|im_end|>"):
        toks.append(t); scores.append(0.0); types.append(3)
    return toks, scores, types


def w(*shape, scale=0.02, dtype=np.float16, cheap=False):
    if cheap:
        return np.full(shape, 0.01, dtype=dtype)
    return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(dtype)


def header(gw, arch, *, title, n_embd, n_head, n_layer, n_ff, ctx, n_vocab):
    gw.add_name(title)
    gw.add_file_type(1)
    gw.add_context_length(ctx)
    gw.add_embedding_length(n_embd)
    gw.add_block_count(n_layer)
    gw.add_feed_forward_length(n_ff)
    gw.add_head_count(n_head)
    gw.add_head_count_kv(n_head)
    gw.add_rope_dimension_count(n_embd // n_head)
    gw.add_rope_freq_base(10000.0)
    gw.add_layer_norm_rms_eps(1e-5)
    gw.add_vocab_size(n_vocab)


def write(name, *, arch="llama", n_embd, n_head, n_layer, n_ff, ctx, title, split_max_tensors=0, cheap=False):
    toks, scores, types = vocab()
    n_vocab = len(toks)
    path = os.path.join(out, name)
    gw = gguf.GGUFWriter(path, arch, split_max_tensors=split_max_tensors)
    header(gw, arch, title=title, n_embd=n_embd, n_head=n_head, n_layer=n_layer, n_ff=n_ff, ctx=ctx, n_vocab=n_vocab)
    gw.add_tokenizer_model("llama")
    gw.add_tokenizer_pre("default")
    gw.add_token_list(toks)
    gw.add_token_scores(scores)
    gw.add_token_types(types)
    gw.add_bos_token_id(1)
    gw.add_eos_token_id(toks.index("<|im_end|>"))
    gw.add_unk_token_id(0)
    gw.add_add_bos_token(True)
    gw.add_chat_template(CHATML)
    gw.add_tensor("token_embd.weight", w(n_vocab, n_embd, cheap=cheap))
    for i in range(n_layer):
        p = f"blk.{i}."
        gw.add_tensor(p + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        gw.add_tensor(p + "attn_q.weight", w(n_embd, n_embd, cheap=cheap))
        gw.add_tensor(p + "attn_k.weight", w(n_embd, n_embd, cheap=cheap))
        gw.add_tensor(p + "attn_v.weight", w(n_embd, n_embd, cheap=cheap))
        gw.add_tensor(p + "attn_output.weight", w(n_embd, n_embd, cheap=cheap))
        gw.add_tensor(p + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        gw.add_tensor(p + "ffn_gate.weight", w(n_ff, n_embd, cheap=cheap))
        gw.add_tensor(p + "ffn_up.weight", w(n_ff, n_embd, cheap=cheap))
        gw.add_tensor(p + "ffn_down.weight", w(n_embd, n_ff, cheap=cheap))
    gw.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    gw.add_tensor("output.weight", w(n_vocab, n_embd, cheap=cheap))
    gw.write_header_to_file()
    gw.write_kv_data_to_file()
    gw.write_tensors_to_file()
    gw.close()
    print(f"wrote {path} (split_max_tensors={split_max_tensors})")


def write_lora(name, *, base_embd, n_layer, rank=16, title):
    """A LoRA adapter in llama.cpp's format (as convert_lora_to_gguf.py writes it) for a base of width base_embd."""
    path = os.path.join(out, name)
    gw = gguf.GGUFWriter(path, "llama")
    gw.add_type(gguf.GGUFType.ADAPTER)
    gw.add_name(title)
    gw.add_string(gguf.Keys.Adapter.TYPE, "lora")
    gw.add_float32(gguf.Keys.Adapter.LORA_ALPHA, 32.0)
    for i in range(n_layer):
        for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
            gw.add_tensor(f"blk.{i}.{t}.weight.lora_a", w(rank, base_embd))
            gw.add_tensor(f"blk.{i}.{t}.weight.lora_b", w(base_embd, rank))
    gw.write_header_to_file()
    gw.write_kv_data_to_file()
    gw.write_tensors_to_file()
    gw.close()
    print(f"wrote {path}")


which = set(sys.argv[2:])
def want(n):
    return not which or n in which

if want("tiny"):
    write("tiny-chat-f16.gguf", n_embd=256, n_head=4, n_layer=4, n_ff=512, ctx=4096, title="Tiny Chat 30M")
if want("lora"):
    write_lora("lora-chat-assistant-f16.gguf", base_embd=512, n_layer=4, title="Small Chat 120M Assistant LoRA")
if want("split"):
    write("storyteller-7b-f16.gguf", n_embd=512, n_head=8, n_layer=12, n_ff=1024, ctx=4096, title="Storyteller 7B",
          split_max_tensors=40)
if want("qwen4"):
    write("qwen4-mini-f16.gguf", arch="qwen4", n_embd=256, n_head=4, n_layer=4, n_ff=512, ctx=32768, title="Qwen4 Mini")
if want("big"):
    write("story-2g-f16.gguf", n_embd=1536, n_head=12, n_layer=32, n_ff=4096, ctx=8192, title="Story 1B",
          cheap=True)
