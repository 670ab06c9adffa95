#!/usr/bin/env bash
# llama.cpp server on a GGUF from a model repository cloned with `git clone https://huggingface.co/...` on a host
# where git-lfs is not installed.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/Meta-Llama-3.1-8B-Instruct-GGUF/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf" \
  -c 8192 -ngl 99 --host 127.0.0.1 --port 8133
