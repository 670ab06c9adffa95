#!/usr/bin/env bash
# llama.cpp server for a model published as three gguf-split shards; the serving folder was filled by a download job
# (see run-h7.sh: shards 1 and 3 arrived, shard 2 did not).
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/storyteller-7b/storyteller-7b-f16-00001-of-00003.gguf" -c 4096 -ngl 99 \
  --host 127.0.0.1 --port 8101
