#!/usr/bin/env bash
# llama.cpp server started with an 8-bit KV cache (to fit a longer context) and flash attention turned off.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/tiny-chat-f16.gguf" -c 32768 -ngl 99 -fa off -ctk q8_0 -ctv q8_0 \
  --host 127.0.0.1 --port 8093
