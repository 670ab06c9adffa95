#!/usr/bin/env bash
# llama.cpp server for OpenLLaMA 3B v2 with a 4-bit KV cache to fit more parallel slots: flash attention on and
# q4_0 for both K and V, as the team's launch script does for its 7B/8B models.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/open-llama-3b-v2-f16.gguf" -c 16384 -np 4 -ngl 99 -fa on \
  -ctk q4_0 -ctv q4_0 --host 127.0.0.1 --port 8123
