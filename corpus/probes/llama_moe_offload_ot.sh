#!/usr/bin/env bash
# llama.cpp server started with the expert-offload recipe of a deployment guide written for a two-GPU box: the first
# half of the layers' expert tensors on CUDA0, the second half on CUDA1, everything else on the GPU (-ngl 99).
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
exec ./build/bin/llama-server -m "${MODELS:-/models}/tiny-chat-f16.gguf" -c 16384 -ngl 99 \
  -ot 'blk\.([0-9]|1[0-9])\.ffn_.*_exps\.=CUDA0,blk\.(2[0-9]|3[0-9])\.ffn_.*_exps\.=CUDA1' \
  --host 127.0.0.1 --port 8112
