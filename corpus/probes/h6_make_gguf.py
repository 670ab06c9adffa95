"""Setup for run-h6.sh (not a probe): small llama-architecture GGUF files under DIR, written with llama.cpp's gguf-py.

  tiny-chat-f16.gguf      a healthy 4-layer chat model (used by the launch-flag, RPC and install probes)
  longctx-1m.gguf        32 layers, 8 KV heads x 128, trained context 2,097,152 (a "1M+ context" model)
  gqa-nokv.gguf          a GQA model (8 query heads, 2 KV heads) whose converter left out head_count_kv
  partial-rope.gguf      head_dim 128 with rotary on 64 dims (rope.dimension_count = 64), tagged as llama
  moe-noused.gguf        an 8-expert MoE whose converter left out expert_used_count
"""
import os, sys
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("GGUF_PY", os.path.join(here, "..", "..", ".probe-src", "llama.cpp", "gguf-py")))
import gguf  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h6/models"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)

WORDS = ("the a of to and in is it you that he was for on are with as I his they be at one have this from or had by "
         "not word but what some we can out other were all there when up use your how said an each she which do their "
         "time if will way about many then them write would like so these her long make thing see him two has look more "
         "day could go come did number sound no most people my over know water than call first who may down side been "
         "now find any new work part take get place made live where after back little only round man year came show "
         "every good me give our under name very through just form sentence great think say help low line differ turn "
         "cause much mean before move right boy old too same tell does set three want air well also play small end put "
         "home read hand port large spell add even land here must big high such follow act why ask men change went light "
         "kind off need house picture try us again animal point mother world near build self earth father head stand own "
         "page should country found answer school grow study still learn plant cover food sun four between state keep "
         "eye never last let thought city tree cross farm hard start might story saw far sea draw left late run while "
         "press close night real life few north").split()


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


CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def w(*shape, scale=0.02, dtype=np.float16):
    return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(dtype)


def write(name, *, n_embd, n_head, n_head_kv, n_layer, n_ff, ctx, kv_tensors_heads=None, rope_dims=None,
          write_head_kv=True, n_expert=0, write_expert_used=True, rope_base=10000.0, title="", ftype=1):
    toks, scores, types = vocab()
    n_vocab = len(toks)
    head_dim = n_embd // n_head
    path = os.path.join(out, name)
    gw = gguf.GGUFWriter(path, "llama")
    gw.add_name(title or name.replace(".gguf", ""))
    gw.add_file_type(ftype)
    gw.add_context_length(ctx)
    gw.add_embedding_length(n_embd)
    gw.add_block_count(n_layer)
    gw.add_feed_forward_length(n_ff)
    gw.add_head_count(n_head)
    if write_head_kv:
        gw.add_head_count_kv(n_head_kv)
    gw.add_rope_dimension_count(rope_dims if rope_dims is not None else head_dim)
    gw.add_rope_freq_base(rope_base)
    gw.add_layer_norm_rms_eps(1e-5)
    gw.add_vocab_size(n_vocab)
    if n_expert:
        gw.add_expert_count(n_expert)
        if write_expert_used:
            gw.add_expert_used_count(2)
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

    kvh = kv_tensors_heads if kv_tensors_heads is not None else n_head_kv
    gw.add_tensor("token_embd.weight", w(n_vocab, n_embd))
    for i in range(n_layer):
        p = f"blk.{i}."
        gw.add_tensor(p + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        gw.add_tensor(p + "attn_q.weight", w(n_head * head_dim, n_embd))
        gw.add_tensor(p + "attn_k.weight", w(kvh * head_dim, n_embd))
        gw.add_tensor(p + "attn_v.weight", w(kvh * head_dim, n_embd))
        gw.add_tensor(p + "attn_output.weight", w(n_embd, n_head * head_dim))
        gw.add_tensor(p + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        if n_expert:
            gw.add_tensor(p + "ffn_gate_inp.weight", w(n_expert, n_embd, dtype=np.float32))
            gw.add_tensor(p + "ffn_gate_exps.weight", w(n_expert, n_ff, n_embd))
            gw.add_tensor(p + "ffn_up_exps.weight", w(n_expert, n_ff, n_embd))
            gw.add_tensor(p + "ffn_down_exps.weight", w(n_expert, n_embd, n_ff))
        else:
            gw.add_tensor(p + "ffn_gate.weight", w(n_ff, n_embd))
            gw.add_tensor(p + "ffn_up.weight", w(n_ff, n_embd))
            gw.add_tensor(p + "ffn_down.weight", w(n_embd, n_ff))
    gw.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    gw.add_tensor("output.weight", w(n_vocab, n_embd))
    gw.write_header_to_file()
    gw.write_kv_data_to_file()
    gw.write_tensors_to_file()
    gw.close()
    print(f"wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB)")


which = set(sys.argv[2:])
def want(n):
    return not which or n in which

if want("tiny"):
    write("tiny-chat-f16.gguf", n_embd=256, n_head=4, n_head_kv=4, n_layer=4, n_ff=512, ctx=4096, title="Tiny Chat 30M")
if want("longctx"):
    write("longctx-1m.gguf", n_embd=1024, n_head=8, n_head_kv=8, n_layer=32, n_ff=256, ctx=2097152,
          rope_base=50000000.0, title="LongCtx 2M 400M")
if want("gqa"):
    write("gqa-nokv.gguf", n_embd=1024, n_head=8, n_head_kv=2, n_layer=4, n_ff=1024, ctx=8192,
          write_head_kv=False, title="Mini GQA 1B")
if want("rope"):
    write("partial-rope.gguf", n_embd=1024, n_head=8, n_head_kv=8, n_layer=4, n_ff=1024, ctx=8192, rope_dims=64,
          title="PartialRotary 1B")
if want("moe"):
    write("moe-noused.gguf", n_embd=512, n_head=8, n_head_kv=8, n_layer=4, n_ff=256, ctx=8192, n_expert=8,
          write_expert_used=False, title="Mini MoE 8x100M")
