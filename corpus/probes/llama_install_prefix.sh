#!/usr/bin/env bash
# Installs the llama.cpp build (shared libraries) under /opt/llama and starts the installed server from a service script.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
cmake --install build --prefix /opt/llama || exit $?
exec /opt/llama/bin/llama-server -m "${MODELS:-/models}/tiny-chat-f16.gguf" -c 4096 -ngl 99 --host 0.0.0.0 --port 8095
