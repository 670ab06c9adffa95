#!/usr/bin/env bash
# Tenth round of probes (h10-*): each program's combined output, one log per program, starting with the command and
# ending with its exit code (helpers in runner-lib.sh).   run-h10.sh OUTDIR
#   H10_TAR=path.tgz re-packs OUTDIR after every program; H10_ONLY="name ..." runs only those programs;
#   H10_DEADLINE: no program starts after that many seconds (default 480);
#   LLAMA_BIN: the split tgz (llama-bin.tgz.*) of an earlier llama.cpp build's build/bin (default: the round-7 build under
#   .probe-src/llama-bin, CUDA sm_90, llama-server only); GGUF_PY: llama.cpp's gguf-py (default .probe-src/llama-min/gguf-py)
cd "$(dirname "$0")"
here=$(pwd)
. ./runner-lib.sh
PROBE_TAR=$H10_TAR PROBE_ONLY=$H10_ONLY PROBE_DEADLINE=${H10_DEADLINE:-480}
probe_init "${1:-/tmp/probe-h10}"
probe_env

W=/tmp/h10; mkdir -p $W
export LLAMA_DIR=/opt/src/llama.cpp MODELS=/models PY="$py"
LLAMA_BIN=${LLAMA_BIN:-$here/../../.probe-src/llama-bin}
export GGUF_PY=${GGUF_PY:-$here/../../.probe-src/llama-min/gguf-py}

# setup (not probes), in the background: llama.cpp binaries and GGUF files; native programs; checkpoint files
{ mkdir -p $LLAMA_DIR/build $MODELS
  cat "$LLAMA_BIN"/llama-bin.tgz.* | tar xzf - -C $LLAMA_DIR/build && ls $LLAMA_DIR/build/bin | head -3
  "$py" h10_make_gguf.py $MODELS
  ls -laR $MODELS; } > "$out/setup-llama.txt" 2>&1 &
llama_setup=$!
{ nvcc -O2 -arch=sm_90 -o $W/tiled_prefill_attn tiled_prefill_attn.cu
  nvcc -O2 -arch=sm_90 -o $W/batch_server_drain batch_server_drain.cu -lpthread
  nvcc -O2 -arch=sm_90 -o $W/kv_ipc_export kv_ipc_export.cu
  ls -la $W; } > "$out/setup-native.txt" 2>&1 &
native_setup=$!
"$py" h10_setup.py $W > "$out/setup.txt" 2>&1

# Python / CUDA probes
run tp_shard_loader 45 "torchrun --nproc-per-node 2 tp_shard_loader.py --model $W/Qwen2.5-14B-Instruct-tp --tensor-parallel-size 2" -- \
  "$py" -m torch.distributed.run --nproc-per-node 2 tp_shard_loader.py --model $W/Qwen2.5-14B-Instruct-tp --tensor-parallel-size 2
run jax_bucket_prefill 120 "python3 jax_bucket_prefill.py --model llama-style-7b --max-prompt-len 32768" -- \
  "$py" jax_bucket_prefill.py --model llama-style-7b --max-prompt-len 32768
run logprob_scoring_serve 90 "python3 logprob_scoring_serve.py --model Llama-3.2-1B-Instruct --max-batch 8" -- \
  "$py" logprob_scoring_serve.py --model Llama-3.2-1B-Instruct --max-batch 8
run embed_sdpa_serve 90 "python3 embed_sdpa_serve.py --model bge-large-en-v1.5 --dtype bfloat16" -- \
  "$py" embed_sdpa_serve.py --model bge-large-en-v1.5 --dtype bfloat16
run mxfp4_experts_serve 90 "python3 mxfp4_experts_serve.py --model gpt-oss-20b" -- \
  "$py" mxfp4_experts_serve.py --model gpt-oss-20b

# native programs
wait $native_setup
run tiled_prefill_attn 60 "./tiled_prefill_attn --model gemma-2-9b-it --warmup-len 2048" -- \
  bash -c "cd $W && exec ./tiled_prefill_attn --model gemma-2-9b-it --warmup-len 2048"
run batch_server_drain 60 "./batch_server_drain --model Mistral-7B-Instruct-v0.3 --max-requests 12 --max-batch 8" -- \
  bash -c "cd $W && exec ./batch_server_drain --model Mistral-7B-Instruct-v0.3 --max-requests 12 --max-batch 8"
run kv_ipc_export 60 "./kv_ipc_export --model Llama-3.1-8B-Instruct --kv-cache-gib 24" -- \
  bash -c "cd $W && exec ./kv_ipc_export --model Llama-3.1-8B-Instruct --kv-cache-gib 24"
run decode_attn_build 120 "make -j16" -- bash decode_attn_build.sh $W/libdecodeattn

# llama.cpp probes
wait $llama_setup
if [ -x $LLAMA_DIR/build/bin/llama-server ]; then
  L=./build/bin
  run llama_lfs_pointer 45 "$L/llama-server -m $MODELS/Meta-Llama-3.1-8B-Instruct-GGUF/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 8192 -ngl 99 --host 127.0.0.1 --port 8133" -- bash llama_lfs_pointer.sh
  run llama_chat_template_edit 45 "$L/llama-server -m $MODELS/hermes-tools-8b-f16.gguf -c 8192 -ngl 99 --jinja --host 127.0.0.1 --port 8134" -- bash llama_chat_template_edit.sh
  run llama_mmproj_pair 45 "$L/llama-server -m $MODELS/llava-v1.5-7b/llava-v1.5-7b-f16.gguf --mmproj $MODELS/llava-v1.5-7b/mmproj-llava-v1.5-13b-f16.gguf -c 4096 -ngl 99 --host 127.0.0.1 --port 8135" -- bash llama_mmproj_pair.sh
  run llama_grammar_json 60 "bash llama_grammar_json.sh  # llama-server -m $MODELS/tiny-chat-f16.gguf -c 4096 -ngl 99 --port 8131, then POST /completion with a GBNF grammar" -- bash llama_grammar_json.sh
  run llama_slot_ctx 60 "bash llama_slot_ctx.sh  # llama-server -m $MODELS/tiny-chat-f16.gguf -c 8192 -np 16 -ngl 99 --port 8132, then POST /completion" -- bash llama_slot_ctx.sh
fi
pack
ls -la "$out"; cat "$out/times.txt" "$out/skipped.txt" 2>/dev/null
