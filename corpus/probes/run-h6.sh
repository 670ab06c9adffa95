#!/usr/bin/env bash
# Sixth round of probes (h6-*): each program's combined output, one log per program, starting with the command and
# ending with its exit code.   run-h6.sh OUTDIR   (H6_TAR=path.tgz re-packs OUTDIR after every program;
# H6_ONLY="name ..." runs only those programs; H6_DEADLINE: no program starts after that many seconds;
# LLAMA_SRC: a llama.cpp source tree, built here with CUDA for sm_90 while the Python probes run)
cd "$(dirname "$0")"
here=$(pwd)
out="${1:-/tmp/probe-h6}"; mkdir -p "$out"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export PATH="$(dirname "$py"):$PATH"
deadline=${H6_DEADLINE:-520}
pack() { [ -n "$H6_TAR" ] && tar czf "$H6_TAR" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null; }
# run NAME TIMEOUT SHOWN-COMMAND -- COMMAND...
run() {
  local name=$1 t=$2 shown=$3; shift 4
  if [ -n "$H6_ONLY" ] && [[ " $H6_ONLY " != *" $name "* ]]; then return; fi
  if [ "$SECONDS" -gt "$deadline" ]; then echo "skipped $name (deadline)" >> "$out/skipped.txt"; return; fi
  { echo "\$ $shown"; timeout "$t" "$@" 2>&1; echo "exit code $?"; } > "$out/$name.log" 2>&1
  echo "$name done at ${SECONDS}s" >> "$out/times.txt"; pack
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  "$py" -c "import torch, triton, transformers, cupy, jax; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__, 'cupy', cupy.__version__, 'jax', jax.__version__, torch.cuda.get_device_name(), torch.cuda.get_device_capability())"
  nvcc --version | tail -2; cmake --version | head -1; "$py" --version; uname -r; nproc
  grep MemTotal /proc/meminfo; echo "vm.overcommit_memory=$(cat /proc/sys/vm/overcommit_memory)"; date -u; } > "$out/env.txt" 2>&1

# setup (not probes): model folders and kernels; llama.cpp copied to /opt/src and built in the background; GGUF files
W=/tmp/h6; mkdir -p $W
"$py" h6_setup.py $W > "$out/setup.txt" 2>&1
mkdir -p $W/ext && cp rotary_ext_setup.py $W/ext/setup.py && cp rotary_ext_kernels.cu $W/ext/
export LLAMA_DIR=/opt/src/llama.cpp MODELS=/models
LLAMA_SRC=${LLAMA_SRC:-$here/../../.probe-src/llama.cpp}
bld=
if [ -d "$LLAMA_SRC" ] && [ -z "$H6_NO_LLAMA" ]; then
  mkdir -p /opt/src $MODELS && rm -rf $LLAMA_DIR && cp -r "$LLAMA_SRC" $LLAMA_DIR
  export CUDACXX=${CUDACXX:-$(command -v nvcc)}
  setsid bash -c "cd $LLAMA_DIR && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_NCCL=OFF -DGGML_RPC=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF && nice -n 5 cmake --build build -j16" \
    > "$out/llama-build.txt" 2>&1 &
  bld=$!
  GGUF_PY=$LLAMA_DIR/gguf-py "$py" h6_make_gguf.py $MODELS > "$out/setup-gguf.txt" 2>&1 &
fi
swap=$(( $(awk '/MemTotal/ {print int($2/1048576)}' /proc/meminfo) * 2 ))

# Python / CUDA probes (while llama.cpp builds)
run chatml_sft_serve 150 "python3 chatml_sft_serve.py --model $W/llama-chatml-sft" -- "$py" chatml_sft_serve.py --model $W/llama-chatml-sft
run paged_kv_decode 120 "python3 paged_kv_decode.py --model llama-3.2-1b-like --block-size 16" -- "$py" paged_kv_decode.py --model llama-3.2-1b-like --block-size 16
run nvfp4_online_quant 120 "python3 nvfp4_online_quant.py --model Llama-3.1-8B-Instruct --quantization nvfp4" -- "$py" nvfp4_online_quant.py --model Llama-3.1-8B-Instruct --quantization nvfp4 --jit-cache $W/jit
run awq_gemm_serve 90 "python3 awq_gemm_serve.py --model $W/story-awq-w4 --quantization awq" -- "$py" awq_gemm_serve.py --model $W/story-awq-w4 --quantization awq
run prebuilt_ptx_warmup 90 "python3 prebuilt_ptx_warmup.py --model Qwen2.5-7B-Instruct" -- "$py" prebuilt_ptx_warmup.py --model Qwen2.5-7B-Instruct --kernel-dir $W/kernels
run guided_json_mask 90 "python3 guided_json_mask.py --model Phi-3-mini-4k-instruct --guided-decoding-backend xgrammar" -- "$py" guided_json_mask.py --model Phi-3-mini-4k-instruct --guided-decoding-backend xgrammar
run strict_weight_loader 120 "python3 strict_weight_loader.py --model $W/qwen-tiny-sft --dtype bfloat16" -- "$py" strict_weight_loader.py --model $W/qwen-tiny-sft --dtype bfloat16
# cpu_swap_space did not fail on the H100 machine of 2026-12-06: vm.overcommit_memory=1 there lets the oversized host
# allocation succeed untouched (no case was made from it)
run cpu_swap_space 90 "python3 cpu_swap_space.py --model Llama-3.1-70B-Instruct-AWQ --swap-space $swap" -- "$py" cpu_swap_space.py --model Llama-3.1-70B-Instruct-AWQ --swap-space $swap
run rotary_ext_build 180 "python3 setup.py build_ext --inplace" -- bash -c "cd $W/ext && '$py' setup.py build_ext --inplace"
run loader_worker_join 120 "python3 loader_worker_join.py --model Mistral-7B-Instruct-v0.3 --num-shards 3" -- "$py" loader_worker_join.py --model Mistral-7B-Instruct-v0.3 --num-shards 3

# llama.cpp probes, once the build is done
if [ -n "$bld" ]; then
  while kill -0 $bld 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 2; done
  if kill -0 $bld 2>/dev/null; then
    echo "llama.cpp build still running at ${SECONDS}s; stopped" >> "$out/skipped.txt"; kill -- -$bld 2>/dev/null
  else
    wait $bld; echo "llama.cpp build exit $? at ${SECONDS}s" >> "$out/times.txt"
  fi
  wait
  tail -c 20000 "$out/llama-build.txt" > "$out/llama-build-tail.txt"
  if [ -x $LLAMA_DIR/build/bin/llama-server ]; then
    L=./build/bin
    run llama_server_longctx 90 "$L/llama-server -m $MODELS/longctx-1m.gguf -c 2097152 -ngl 99 --host 127.0.0.1 --port 8091" -- bash llama_server_longctx.sh
    run llama_server_gqa_gguf 60 "$L/llama-server -m $MODELS/gqa-nokv.gguf -c 8192 -ngl 99 --host 127.0.0.1 --port 8092" -- bash llama_server_gqa_gguf.sh
    run llama_server_kvquant 60 "$L/llama-server -m $MODELS/tiny-chat-f16.gguf -c 32768 -ngl 99 -fa off -ctk q8_0 -ctv q8_0 --host 127.0.0.1 --port 8093" -- bash llama_server_kvquant.sh
    run llama_server_partial_rope 60 "$L/llama-server -m $MODELS/partial-rope.gguf -c 8192 -ngl 99 --host 127.0.0.1 --port 8094" -- bash llama_server_partial_rope.sh
    run llama_completion_moe 60 "$L/llama-completion -m $MODELS/moe-noused.gguf -p \"The capital of France is\" -n 32 -ngl 99 --no-conversation" -- bash llama_completion_moe.sh
    run llama_rpc_offload 60 "bash llama_rpc_offload.sh" -- bash llama_rpc_offload.sh
    run llama_install_prefix 60 "cmake --install build --prefix /opt/llama && /opt/llama/bin/llama-server -m $MODELS/tiny-chat-f16.gguf -c 4096 -ngl 99 --host 0.0.0.0 --port 8095" -- bash llama_install_prefix.sh
  fi
fi
pack
# keep the built binaries (for a rerun without a rebuild), if asked and there is time
if [ -n "$H6_SAVE_BIN" ] && [ -x $LLAMA_DIR/build/bin/llama-server ] && [ "$SECONDS" -lt 560 ]; then
  tar czf - -C $LLAMA_DIR/build bin | split -b 15m - "$H6_SAVE_BIN/llama-bin.tgz."
fi
ls -la "$out"; cat "$out/times.txt" "$out/skipped.txt" 2>/dev/null
