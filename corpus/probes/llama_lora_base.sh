#!/usr/bin/env bash
# llama.cpp server with a LoRA adapter (converted with convert_lora_to_gguf.py) applied to a base GGUF.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/tiny-chat-f16.gguf" --lora "${MODELS:-/models}/lora-chat-assistant-f16.gguf" \
  -c 4096 -ngl 99 --host 127.0.0.1 --port 8103
