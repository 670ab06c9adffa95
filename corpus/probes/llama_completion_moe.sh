#!/usr/bin/env bash
# llama.cpp completion run on an 8-expert MoE GGUF whose conversion left out llama.expert_used_count.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-completion -m "${MODELS:-/models}/moe-noused.gguf" -p "The capital of France is" -n 32 -ngl 99 \
  --no-conversation
