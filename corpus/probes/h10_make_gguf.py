"""Setup for run-h10.sh (not a probe): small GGUF files under DIR, written with llama.cpp's gguf-py through the helpers
of h7_make_gguf.py (its vocabulary, tensor writer and header).

  tiny-chat-f16.gguf                          a healthy 4-layer llama chat model (n_embd 256, ChatML template)
  Meta-Llama-3.1-8B-Instruct-GGUF/            a model repository cloned with git but without git-lfs: the .gguf in
    Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf    it is the 135-byte LFS pointer text, not the weights
  hermes-tools-8b-f16.gguf                    a llama chat model whose tokenizer.chat_template (copied from the
                                              fine-tune's tokenizer_config.json) was hand-edited to add a default
                                              system prompt and lost its closing {% endif %}
  llava-v1.5-7b/llava-v1.5-7b-f16.gguf        the text model of a LLaVA-style pair (n_embd 256)
  llava-v1.5-7b/mmproj-llava-v1.5-13b-f16.gguf  a CLIP vision tower + MLP projector whose projector outputs 512-wide
                                              embeddings (the 13B's hidden size), saved next to the 7B text model
"""
import os, sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h10/models"
os.makedirs(out, exist_ok=True)

_argv, sys.argv = sys.argv, [sys.argv[0], out, "-"]
import h7_make_gguf as h7  # noqa: E402
sys.argv = _argv
h7.out = out
gguf = h7.gguf

which = set(sys.argv[2:])
def want(n):
    return not which or n in which


if want("tiny"):
    h7.write("tiny-chat-f16.gguf", n_embd=256, n_head=4, n_layer=4, n_ff=512, ctx=8192, title="Tiny Chat 30M")

if want("lfs"):
    d = os.path.join(out, "Meta-Llama-3.1-8B-Instruct-GGUF")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"), "w") as f:
        f.write("version https://git-lfs.github.com/spec/v1\n"
                "oid sha256:7b064f5842bf9532c91456deda288a1b672397a54fa729aa665952863033557c\n"
                "size 4920739232\n")
    for name, text in (("README.md", "---\nlicense: llama3.1\nbase_model: meta-llama/Meta-Llama-3.1-8B-Instruct\n"
                                      "---\n# Meta-Llama-3.1-8B-Instruct-GGUF\n"),
                       (".gitattributes", "*.gguf filter=lfs diff=lfs merge=lfs -text\n")):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    print("wrote", d)

if want("template"):
    # Hermes-style template with tool support; the edit added a default system prompt branch and dropped one endif
    broken = (
        "{{- bos_token }}"
        "{%- if messages[0]['role'] == 'system' %}"
        "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
        "{%- set loop_messages = messages[1:] %}"
        "{%- else %}"
        "{{- '<|im_start|>system\\nYou are Hermes, a helpful assistant that can call tools.<|im_end|>\\n' }}"
        "{%- set loop_messages = messages %}"
        "{%- if tools %}"
        "{{- '<|im_start|>system\\nYou have access to the following tools:\\n' }}"
        "{%- for tool in tools %}{{- tool | tojson }}{{- '\\n' }}{%- endfor %}"
        "{{- '<|im_end|>\\n' }}"
        "{%- endif %}"
        "{%- for message in loop_messages %}"
        "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
        "{%- endfor %}"
        "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")
    saved = h7.CHATML
    h7.CHATML = broken
    h7.write("hermes-tools-8b-f16.gguf", n_embd=256, n_head=4, n_layer=4, n_ff=512, ctx=8192,
             title="Hermes Tools 8B")
    h7.CHATML = saved

if want("llava"):
    d = os.path.join(out, "llava-v1.5-7b")
    os.makedirs(d, exist_ok=True)
    h7.out = d
    h7.write("llava-v1.5-7b-f16.gguf", n_embd=256, n_head=4, n_layer=4, n_ff=512, ctx=4096, title="Llava v1.5 7b")
    h7.out = out
    # CLIP ViT (tiny) + 2-layer MLP projector into a 512-wide LLM (the 13B's hidden size)
    n_embd, n_head, n_ff, n_layer, img, patch, proj_out = 128, 4, 256, 2, 56, 14, 512
    n_pos = (img // patch) ** 2 + 1
    path = os.path.join(d, "mmproj-llava-v1.5-13b-f16.gguf")
    gw = gguf.GGUFWriter(path, "clip")
    gw.add_name("Llava v1.5 13b mmproj")
    gw.add_file_type(1)
    gw.add_bool("clip.has_vision_encoder", True)
    gw.add_bool("clip.has_text_encoder", False)
    gw.add_string("clip.projector_type", "mlp")
    gw.add_bool("clip.use_gelu", False)
    gw.add_uint32("clip.vision.image_size", img)
    gw.add_uint32("clip.vision.patch_size", patch)
    gw.add_uint32("clip.vision.embedding_length", n_embd)
    gw.add_uint32("clip.vision.feed_forward_length", n_ff)
    gw.add_uint32("clip.vision.projection_dim", proj_out)
    gw.add_uint32("clip.vision.block_count", n_layer)
    gw.add_uint32("clip.vision.attention.head_count", n_head)
    gw.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-5)
    gw.add_array("clip.vision.image_mean", [0.48145466, 0.4578275, 0.40821073])
    gw.add_array("clip.vision.image_std", [0.26862954, 0.26130258, 0.27577711])
    w = h7.w
    f32 = np.float32
    gw.add_tensor("v.class_embd", w(n_embd).astype(f32))
    gw.add_tensor("v.patch_embd.weight", w(n_embd, 3, patch, patch))
    gw.add_tensor("v.position_embd.weight", w(n_pos, n_embd))
    gw.add_tensor("v.pre_ln.weight", np.ones(n_embd, dtype=f32))
    gw.add_tensor("v.pre_ln.bias", np.zeros(n_embd, dtype=f32))
    for i in range(n_layer):
        p = f"v.blk.{i}."
        for t in ("attn_q", "attn_k", "attn_v", "attn_out"):
            gw.add_tensor(p + t + ".weight", w(n_embd, n_embd))
            gw.add_tensor(p + t + ".bias", np.zeros(n_embd, dtype=f32))
        for t in ("ln1", "ln2"):
            gw.add_tensor(p + t + ".weight", np.ones(n_embd, dtype=f32))
            gw.add_tensor(p + t + ".bias", np.zeros(n_embd, dtype=f32))
        gw.add_tensor(p + "ffn_up.weight", w(n_ff, n_embd))
        gw.add_tensor(p + "ffn_up.bias", np.zeros(n_ff, dtype=f32))
        gw.add_tensor(p + "ffn_down.weight", w(n_embd, n_ff))
        gw.add_tensor(p + "ffn_down.bias", np.zeros(n_embd, dtype=f32))
    gw.add_tensor("mm.0.weight", w(proj_out, n_embd))
    gw.add_tensor("mm.0.bias", np.zeros(proj_out, dtype=f32))
    gw.add_tensor("mm.2.weight", w(proj_out, proj_out))
    gw.add_tensor("mm.2.bias", np.zeros(proj_out, dtype=f32))
    gw.write_header_to_file()
    gw.write_kv_data_to_file()
    gw.write_tensors_to_file()
    gw.close()
    print("wrote", path)
