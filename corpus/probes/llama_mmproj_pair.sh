#!/usr/bin/env bash
# llama.cpp server for a LLaVA-1.5 model: the text model and the vision projector (mmproj) were downloaded into one
# folder from two community repositories.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
d="${MODELS:-/models}/llava-v1.5-7b"
exec ./build/bin/llama-server -m "$d/llava-v1.5-7b-f16.gguf" --mmproj "$d/mmproj-llava-v1.5-13b-f16.gguf" \
  -c 4096 -ngl 99 --host 127.0.0.1 --port 8135
