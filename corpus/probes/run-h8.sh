#!/usr/bin/env bash
# Eighth round of probes (h8-*): each program's combined output, one log per program, starting with the command and
# ending with its exit code (helpers in runner-lib.sh).   run-h8.sh OUTDIR
#   H8_TAR=path.tgz re-packs OUTDIR after every program; H8_ONLY="name ..." runs only those programs;
#   H8_DEADLINE: no program starts after that many seconds (default 480);
#   LLAMA_BIN: the split tgz (llama-bin.tgz.*) of an earlier llama.cpp build's build/bin (default: the round-7 build under
#   .probe-src/llama-bin, CUDA sm_90, llama-server only); GGUF_PY: llama.cpp's gguf-py (default .probe-src/llama-min/gguf-py)
cd "$(dirname "$0")"
here=$(pwd)
. ./runner-lib.sh
PROBE_TAR=$H8_TAR PROBE_ONLY=$H8_ONLY PROBE_DEADLINE=${H8_DEADLINE:-480}
probe_init "${1:-/tmp/probe-h8}"
probe_env

W=/tmp/h8; mkdir -p $W
export LLAMA_DIR=/opt/src/llama.cpp MODELS=/models
LLAMA_BIN=${LLAMA_BIN:-$here/../../.probe-src/llama-bin}
export GGUF_PY=${GGUF_PY:-$here/../../.probe-src/llama-min/gguf-py}

# setup (not probes), in the background: llama.cpp binaries and GGUF files; native programs
{ mkdir -p $LLAMA_DIR/build $MODELS
  cat "$LLAMA_BIN"/llama-bin.tgz.* | tar xzf - -C $LLAMA_DIR/build && ls $LLAMA_DIR/build/bin | head -3
  "$py" h8_make_gguf.py $MODELS
  ls -la $MODELS; } > "$out/setup-llama.txt" 2>&1 &
llama_setup=$!
cuinc=; culib=
if [ ! -e "$(dirname "$(command -v nvcc)")/../include/cublasLt.h" ]; then
  nv=$("$py" -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)/nvidia
  h=$(ls -d $nv/*/include 2>/dev/null | while read d; do [ -e $d/cublasLt.h ] && echo $d; done | head -1)
  [ -n "$h" ] && cuinc="-I$h" && culib="-L$(dirname $h)/lib -Xlinker -rpath=$(dirname $h)/lib"
fi
{ nvcc -O2 -arch=sm_90 $cuinc -o $W/fp8_engine fp8_linear_engine.cu $culib -lcublasLt -lcublas
  nvcc -O2 -arch=sm_90 -o $W/kv_arena_engine kv_arena_engine.cu
  ls -la $W; } > "$out/setup-native.txt" 2>&1 &
native_setup=$!
{ "$py" h8_setup.py $W
  gcc -O2 -shared -fPIC -o $W/fasttok-model/libfasttok.so fasttok.c
  ls -la $W $W/app $W/fasttok-model; } > "$out/setup.txt" 2>&1

# Python / CUDA probes
run alloc_conf_serve 60 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,garbage_collection_threshold:80 python3 alloc_conf_serve.py --model Qwen2.5-14B-Instruct" -- \
  env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,garbage_collection_threshold:80 "$py" alloc_conf_serve.py --model Qwen2.5-14B-Instruct
run fused_rmsnorm_serve 60 "cd $W/app && python3 serve.py --model Llama-3.1-8B-Instruct --port 8000" -- \
  bash -c "cd $W/app && exec '$py' serve.py --model Llama-3.1-8B-Instruct --port 8000"
run fasttok_engine 60 "python3 fasttok_engine.py --model $W/fasttok-model" -- "$py" fasttok_engine.py --model $W/fasttok-model
run batch_prefill_nopad 120 "python3 batch_prefill_nopad.py --model $W/tiny-llama-nopad" -- "$py" batch_prefill_nopad.py --model $W/tiny-llama-nopad
run stream_detok_serve 60 "python3 stream_detok_serve.py --model $W/bpe-chat" -- "$py" stream_detok_serve.py --model $W/bpe-chat
run async_stream_server 60 "python3 async_stream_server.py --model Mistral-7B-Instruct-v0.3 --port 8021" -- "$py" async_stream_server.py --model Mistral-7B-Instruct-v0.3 --port 8021
run parallel_sampling_serve 120 "python3 parallel_sampling_serve.py --model Llama-3.1-8B-Instruct --max-model-len 131072" -- "$py" parallel_sampling_serve.py --model Llama-3.1-8B-Instruct --max-model-len 131072
wait $native_setup
run fp8_linear_engine 60 "./fp8_engine --model Llama-3.1-8B-Instruct-FP8" -- bash -c "cd $W && exec ./fp8_engine --model Llama-3.1-8B-Instruct-FP8"
run kv_arena_engine 60 "./kv_arena_engine --requests 4" -- bash -c "cd $W && exec ./kv_arena_engine --requests 4"
run wgmma_gemm_build 150 "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build -j16" -- bash wgmma_gemm_build.sh $W/hopper_kernels
run stop_string_engine 40 "python3 stop_string_engine.py --model Qwen2.5-3B-Instruct" -- "$py" stop_string_engine.py --model Qwen2.5-3B-Instruct

# llama.cpp probes
wait $llama_setup
if [ -x $LLAMA_DIR/build/bin/llama-server ]; then
  L=./build/bin
  run llama_qwen3_sft 45 "$L/llama-server -m $MODELS/qwen3-4b-sft-f16.gguf -c 8192 -ngl 99 --host 127.0.0.1 --port 8111" -- bash llama_qwen3_sft.sh
  run llama_moe_offload_ot 45 "$L/llama-server -m $MODELS/tiny-chat-f16.gguf -c 16384 -ngl 99 -ot 'blk\.([0-9]|1[0-9])\.ffn_.*_exps\.=CUDA0,blk\.(2[0-9]|3[0-9])\.ffn_.*_exps\.=CUDA1' --host 127.0.0.1 --port 8112" -- bash llama_moe_offload_ot.sh
  run llama_embed_server 60 "$L/llama-server -m $MODELS/e5-mistral-embed-f16.gguf --embedding --pooling mean -c 65536 -b 65536 -ub 65536 -fa off -ngl 99 --host 127.0.0.1 --port 8113" -- bash llama_embed_server.sh
fi

# last: the compile probe (Inductor + CUDA graphs, the slowest)
run compile_decode_serve 180 "python3 compile_decode_serve.py --model Llama-3.2-1B-Instruct --compile-mode reduce-overhead" -- "$py" compile_decode_serve.py --model Llama-3.2-1B-Instruct --compile-mode reduce-overhead
pack
ls -la "$out"; cat "$out/times.txt" "$out/skipped.txt" 2>/dev/null
