#!/usr/bin/env bash
# llama.cpp server for a GGUF converted by a newer convert_hf_to_gguf.py (general.architecture = qwen4).
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/qwen4-mini-f16.gguf" -c 8192 -ngl 99 --host 127.0.0.1 --port 8102
