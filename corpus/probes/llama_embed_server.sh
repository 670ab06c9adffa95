#!/usr/bin/env bash
# llama.cpp server as an embedding endpoint for long documents: a llama-architecture embedding model (32 heads), mean
# pooling, one 65,536-token physical batch so a whole document is embedded in one pass (-b = -ub = -c), flash attention
# off as in the embedding service's old launch script.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/e5-mistral-embed-f16.gguf" --embedding --pooling mean \
  -c 65536 -b 65536 -ub 65536 -fa off -ngl 99 --host 127.0.0.1 --port 8113
