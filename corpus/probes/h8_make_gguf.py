"""Setup for run-h8.sh (not a probe): small GGUF files under DIR, written with llama.cpp's gguf-py through the helpers of
h7_make_gguf.py (its vocabulary, tensor writer and header).

  tiny-chat-f16.gguf             a healthy 4-layer llama chat model (n_embd 256), for the tensor-override probe
  qwen3-4b-sft-f16.gguf          a fine-tune converted as general.architecture = qwen3, whose exported checkpoint has no
                                 q_norm / k_norm weights (its config.json said Qwen3ForCausalLM; the weights are Qwen2-style)
  e5-mistral-embed-f16.gguf      a llama-architecture embedding model (n_embd 4096, 32 heads, trained context 131072)
"""
import os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h8/models"
os.makedirs(out, exist_ok=True)

# h7_make_gguf writes the models named on its command line when imported; name none, then point it at our folder
_argv, sys.argv = sys.argv, [sys.argv[0], out, "-"]
import h7_make_gguf as h7  # noqa: E402
sys.argv = _argv
h7.out = out

which = set(sys.argv[2:])
def want(n):
    return not which or n in which

if want("tiny"):
    h7.write("tiny-chat-f16.gguf", n_embd=256, n_head=4, n_layer=4, n_ff=512, ctx=4096, title="Tiny Chat 30M")
if want("qwen3"):
    h7.write("qwen3-4b-sft-f16.gguf", arch="qwen3", n_embd=512, n_head=8, n_layer=6, n_ff=1024, ctx=40960,
             title="Qwen3 4B SFT")
if want("embed"):
    h7.write("e5-mistral-embed-f16.gguf", n_embd=4096, n_head=32, n_layer=2, n_ff=1024, ctx=131072,
             title="E5 Mistral Embed", cheap=True)
