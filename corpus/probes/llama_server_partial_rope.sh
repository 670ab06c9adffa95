#!/usr/bin/env bash
# llama.cpp server for a model with partial rotary embeddings (rotary on 64 of 128 head dims) that was converted to GGUF
# under the plain llama architecture.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/partial-rope.gguf" -c 8192 -ngl 99 --host 127.0.0.1 --port 8094
