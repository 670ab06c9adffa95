#!/usr/bin/env bash
# llama.cpp server for a Qwen3 4B fine-tune converted with convert_hf_to_gguf.py. The fine-tune was exported by a
# training script from a Qwen2.5-style checkpoint; its config.json says "architectures": ["Qwen3ForCausalLM"].
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/qwen3-4b-sft-f16.gguf" -c 8192 -ngl 99 --host 127.0.0.1 --port 8111
