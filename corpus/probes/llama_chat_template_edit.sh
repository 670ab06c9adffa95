#!/usr/bin/env bash
# llama.cpp server for a tool-calling fine-tune (Hermes-style ChatML); the GGUF's chat template comes from the
# fine-tune's tokenizer_config.json, which was edited to add a default system prompt before conversion.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/hermes-tools-8b-f16.gguf" -c 8192 -ngl 99 --jinja \
  --host 127.0.0.1 --port 8134
