#!/usr/bin/env bash
# Ninth round of probes (h9-*): each program's combined output, one log per program, starting with the command and
# ending with its exit code (helpers in runner-lib.sh).   run-h9.sh OUTDIR
#   H9_TAR=path.tgz re-packs OUTDIR after every program; H9_ONLY="name ..." runs only those programs;
#   H9_DEADLINE: no program starts after that many seconds (default 480);
#   LLAMA_BIN: the split tgz (llama-bin.tgz.*) of an earlier llama.cpp build's build/bin (default: the round-7 build under
#   .probe-src/llama-bin, CUDA sm_90, llama-server only); GGUF_PY: llama.cpp's gguf-py (default .probe-src/llama-min/gguf-py)
cd "$(dirname "$0")"
here=$(pwd)
. ./runner-lib.sh
PROBE_TAR=$H9_TAR PROBE_ONLY=$H9_ONLY PROBE_DEADLINE=${H9_DEADLINE:-480}
probe_init "${1:-/tmp/probe-h9}"
probe_env

W=/tmp/h9; mkdir -p $W
export LLAMA_DIR=/opt/src/llama.cpp MODELS=/models
LLAMA_BIN=${LLAMA_BIN:-$here/../../.probe-src/llama-bin}
export GGUF_PY=${GGUF_PY:-$here/../../.probe-src/llama-min/gguf-py}

# setup (not probes), in the background: llama.cpp binaries and GGUF files; native programs
{ mkdir -p $LLAMA_DIR/build $MODELS
  cat "$LLAMA_BIN"/llama-bin.tgz.* | tar xzf - -C $LLAMA_DIR/build && ls $LLAMA_DIR/build/bin | head -3
  "$py" h9_make_gguf.py $MODELS
  ls -la $MODELS; } > "$out/setup-llama.txt" 2>&1 &
llama_setup=$!
{ nvcc -O2 -arch=sm_90 -o $W/persistent_gemv persistent_gemv.cu
  nvcc -O2 -arch=sm_90 -o $W/batch_decode_engine batch_decode_engine.cu
  nvcc -O2 -arch=sm_90 -o $W/kv_fabric_pool kv_fabric_pool.cu -ldl
  ls -la $W; } > "$out/setup-native.txt" 2>&1 &
native_setup=$!
"$py" h9_setup.py $W > "$out/setup.txt" 2>&1

# Python / CUDA probes
run int8_kernels_serve 60 "PYTHONPATH=$W/site python3 int8_kernels_serve.py --model Llama-3.1-8B-Instruct-int8wo --quantization int8_wo" -- \
  env PYTHONPATH=$W/site "$py" int8_kernels_serve.py --model Llama-3.1-8B-Instruct-int8wo --quantization int8_wo
run sysprompt_chat_batch 90 "python3 sysprompt_chat_batch.py --model $W/Mistral-7B-Instruct-v0.1 --input $W/eval_v2.jsonl --batch-size 8" -- \
  "$py" sysprompt_chat_batch.py --model $W/Mistral-7B-Instruct-v0.1 --input $W/eval_v2.jsonl --batch-size 8
run tied_head_story_serve 60 "python3 tied_head_story_serve.py --model $W/story-1.5b-sft" -- \
  "$py" tied_head_story_serve.py --model $W/story-1.5b-sft
run nemo_head_dim_serve 90 "python3 nemo_head_dim_serve.py --model $W/Mistral-Nemo-Instruct-2407 --max-model-len 16384" -- \
  "$py" nemo_head_dim_serve.py --model $W/Mistral-Nemo-Instruct-2407 --max-model-len 16384
run fp32_ckpt_loader 90 "python3 fp32_ckpt_loader.py --model $W/seed-oss-36b-sft --dtype auto --max-model-len 32768" -- \
  "$py" fp32_ckpt_loader.py --model $W/seed-oss-36b-sft --dtype auto --max-model-len 32768
run stale_master_addr 60 "MASTER_ADDR=10.42.7.19 MASTER_PORT=29517 python3 stale_master_addr.py --model Qwen2.5-32B-Instruct --tensor-parallel-size 2" -- \
  env MASTER_ADDR=10.42.7.19 MASTER_PORT=29517 "$py" stale_master_addr.py --model Qwen2.5-32B-Instruct --tensor-parallel-size 2
run kv_preempt_serve 90 "python3 kv_preempt_serve.py --model Qwen2.5-7B-Instruct --max-model-len 32768 --num-gpu-blocks-override 512" -- \
  "$py" kv_preempt_serve.py --model Qwen2.5-7B-Instruct --max-model-len 32768 --num-gpu-blocks-override 512

# native programs
wait $native_setup
run persistent_gemv 60 "./persistent_gemv --model Llama-3.1-8B-Instruct --warmup-steps 4" -- \
  bash -c "cd $W && exec ./persistent_gemv --model Llama-3.1-8B-Instruct --warmup-steps 4"
run batch_decode_engine 60 "./batch_decode_engine --model tinyllama-1.1b-chat" -- \
  bash -c "cd $W && exec ./batch_decode_engine --model tinyllama-1.1b-chat"
run kv_fabric_pool 60 "./kv_fabric_pool --kv-pool-gib 24 --page-tokens 64" -- \
  bash -c "cd $W && exec ./kv_fabric_pool --kv-pool-gib 24 --page-tokens 64"
run topk_sampler_build 120 "make -j16" -- bash topk_sampler_build.sh $W/libsampler

# llama.cpp probes
wait $llama_setup
if [ -x $LLAMA_DIR/build/bin/llama-server ]; then
  L=./build/bin
  run llama_ik_quant 45 "$L/llama-server -m $MODELS/Llama-3.1-8B-Instruct-IQ4_KS.gguf -c 16384 -ngl 99 -fa on --host 127.0.0.1 --port 8121" -- bash llama_ik_quant.sh
  run llama_bpe_nomerges 45 "$L/llama-server -m $MODELS/llama3-8b-orpo-f16.gguf -c 8192 -ngl 99 --host 127.0.0.1 --port 8122" -- bash llama_bpe_nomerges.sh
  run llama_kvq_head100 45 "$L/llama-server -m $MODELS/open-llama-3b-v2-f16.gguf -c 16384 -np 4 -ngl 99 -fa on -ctk q4_0 -ctv q4_0 --host 127.0.0.1 --port 8123" -- bash llama_kvq_head100.sh
fi

# last: the compile probe (Inductor, the slowest)
run compile_seqlens_warmup 200 "python3 compile_seqlens_warmup.py --model Llama-3.2-1B-Instruct --max-num-seqs 64" -- \
  "$py" compile_seqlens_warmup.py --model Llama-3.2-1B-Instruct --max-num-seqs 64
pack
ls -la "$out"; cat "$out/times.txt" "$out/skipped.txt" 2>/dev/null
