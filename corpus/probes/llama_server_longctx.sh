#!/usr/bin/env bash
# llama.cpp server for a long-context GGUF (32 layers, 8 KV heads x 128, trained context 2,097,152 tokens), started with
# its full trained context and every layer on the GPU.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/longctx-1m.gguf" -c 2097152 -ngl 99 --host 127.0.0.1 --port 8091
