#!/usr/bin/env bash
# llama.cpp server for a Llama 3 8B ORPO fine-tune the team converted with its pinned copy of convert_hf_to_gguf.py
# (the fine-tune's tokenizer.json was saved by a recent tokenizers release).
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/llama3-8b-orpo-f16.gguf" -c 8192 -ngl 99 \
  --host 127.0.0.1 --port 8122
