#!/usr/bin/env bash
# llama.cpp server for a Llama 3.1 8B Instruct GGUF downloaded from a community repo ("IQ4_KS, best quality per bit");
# the build is mainline llama.cpp (CUDA, sm_90).
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/Llama-3.1-8B-Instruct-IQ4_KS.gguf" -c 16384 -ngl 99 -fa on \
  --host 127.0.0.1 --port 8121
