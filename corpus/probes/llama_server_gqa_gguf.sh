#!/usr/bin/env bash
# llama.cpp server for a GQA model (8 query heads, 2 KV heads) converted to GGUF by a conversion script that did not
# write llama.attention.head_count_kv.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/gqa-nokv.gguf" -c 8192 -ngl 99 --host 127.0.0.1 --port 8092
