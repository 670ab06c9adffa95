#!/usr/bin/env bash
# Seventh round of probes (h7-*): each program's combined output, one log per program, starting with the command and
# ending with its exit code.   run-h7.sh OUTDIR   (H7_TAR=path.tgz re-packs OUTDIR after every program;
# H7_ONLY="name ..." runs only those programs; H7_DEADLINE: no program starts after that many seconds;
# LLAMA_SRC: a llama.cpp source tree, built here with CUDA for sm_90 while the Python/CUDA probes run;
# LLAMA_BIN: a tgz of an earlier build's build/bin (skips the build); H7_SAVE_BIN=DIR keeps this build's bin there)
cd "$(dirname "$0")"
here=$(pwd)
out="${1:-/tmp/probe-h7}"; mkdir -p "$out"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export PATH="$(dirname "$py"):$PATH"
deadline=${H7_DEADLINE:-520}
pack() { [ -n "$H7_TAR" ] && tar czf "$H7_TAR" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null; }
# run NAME TIMEOUT SHOWN-COMMAND -- COMMAND...
run() {
  local name=$1 t=$2 shown=$3; shift 4
  if [ -n "$H7_ONLY" ] && [[ " $H7_ONLY " != *" $name "* ]]; then return; fi
  if [ "$SECONDS" -gt "$deadline" ]; then echo "skipped $name (deadline)" >> "$out/skipped.txt"; return; fi
  { echo "\$ $shown"; timeout "$t" "$@" 2>&1; echo "exit code $?"; } > "$out/$name.log" 2>&1
  echo "$name done at ${SECONDS}s" >> "$out/times.txt"; pack
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  "$py" -c "import torch, triton, transformers, cupy, jax; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__, 'cupy', cupy.__version__, 'jax', jax.__version__, torch.cuda.get_device_name(), torch.cuda.get_device_capability())"
  nvcc --version | tail -2; cmake --version | head -1; "$py" --version; uname -r; nproc
  grep MemTotal /proc/meminfo; echo "vm.overcommit_memory=$(cat /proc/sys/vm/overcommit_memory)"; date -u; } > "$out/env.txt" 2>&1

# llama.cpp: copied to /opt/src and built in the background (or unpacked from LLAMA_BIN); GGUF files
export LLAMA_DIR=/opt/src/llama.cpp MODELS=/models
LLAMA_SRC=${LLAMA_SRC:-$here/../../.probe-src/llama.cpp}
bld=
if [ -d "$LLAMA_SRC" ] && [ -z "$H7_NO_LLAMA" ]; then
  mkdir -p /opt/src $MODELS && rm -rf $LLAMA_DIR && cp -r "$LLAMA_SRC" $LLAMA_DIR
  export CUDACXX=${CUDACXX:-$(command -v nvcc)}
  if [ -n "$LLAMA_BIN" ]; then
    mkdir -p $LLAMA_DIR/build && cat $LLAMA_BIN | tar xzf - -C $LLAMA_DIR/build
  else
    setsid bash -c "cd $LLAMA_DIR && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_NCCL=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF && nice -n 5 cmake --build build -j16 --target llama-server" \
      > "$out/llama-build.txt" 2>&1 &
    bld=$!
  fi
  { GGUF_PY=$LLAMA_DIR/gguf-py "$py" h7_make_gguf.py $MODELS
    mkdir -p $MODELS/storyteller-7b
    # the download job: shard 2 of 3 never arrived
    cp $MODELS/storyteller-7b-f16-00001-of-00003.gguf $MODELS/storyteller-7b-f16-00003-of-00003.gguf $MODELS/storyteller-7b/
    ls -la $MODELS $MODELS/storyteller-7b; } > "$out/setup-gguf.txt" 2>&1 &
fi

# setup (not probes): model folders, kernels, native programs
W=/tmp/h7; mkdir -p $W/kernels
{ "$py" h7_setup.py $W
  "$py" moe_pruned_setup.py $W/qwen3-moe-pruned-60e
  bash cu12_ext_setup.sh $W/ext "$py"
  nvcc -fatbin -gencode arch=compute_100a,code=sm_100a -gencode arch=compute_120a,code=sm_120a \
    -o $W/kernels/fused_moe_fp4.fatbin fused_moe_fp4.cu
  echo '{"package": "fastmoe-kernels 0.4.1", "cuda": "13.0", "archs": ["sm_100a", "sm_120a"]}' > $W/kernels/manifest.json
  nvcc -O2 -arch=sm_90 -lineinfo -o $W/rmsnorm_engine rmsnorm_2880.cu
  nvcc -O2 -arch=sm_90 -o $W/rope_engine rope_long_prefill.cu
  ls -la $W $W/kernels; } > "$out/setup.txt" 2>&1
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)

# Python / CUDA probes (while llama.cpp builds)
# fp8_lmhead_serve: on the first run of 2026-12-06 an earlier version (without ignore_eos) ended every completion
# at once with an empty text; the version here ran later that day with H7_ONLY (case h7-014)
run fp8_lmhead_serve 90 "python3 fp8_lmhead_serve.py --model tinystories-word-1m --quantization fp8" -- "$py" fp8_lmhead_serve.py --model tinystories-word-1m --quantization fp8
run rmsnorm_2880 120 "compute-sanitizer --tool memcheck ./rmsnorm_engine --model gpt-oss-20b --prompt-tokens 37" -- bash -c "cd $W && '$san' --tool memcheck ./rmsnorm_engine --model gpt-oss-20b --prompt-tokens 37"
run splitk_tune_build 150 "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j16" -- bash splitk_tune_build.sh $W/splitk_tune
run dp_sched_broadcast 120 "TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --nproc-per-node 2 dp_sched_broadcast.py" -- env TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --nproc-per-node 2 dp_sched_broadcast.py
run triton_headdim80_decode 150 "python3 triton_headdim80_decode.py --model microsoft/phi-2" -- "$py" triton_headdim80_decode.py --model microsoft/phi-2
run rope_long_prefill 60 "./rope_engine --long-prompt 70000" -- bash -c "cd $W && ./rope_engine --long-prompt 70000"
run blackwell_only_kernels 90 "python3 blackwell_only_kernels.py --model Qwen3-30B-A3B-FP4 --kernel-dir $W/kernels" -- "$py" blackwell_only_kernels.py --model Qwen3-30B-A3B-FP4 --kernel-dir $W/kernels
run moe_pruned_router 90 "python3 moe_pruned_router.py --model $W/qwen3-moe-pruned-60e" -- "$py" moe_pruned_router.py --model $W/qwen3-moe-pruned-60e
run cu12_ext_import 60 "python3 cu12_ext_import.py --ext-dir $W/ext" -- "$py" cu12_ext_import.py --ext-dir $W/ext
run prompt_logprobs_serve 120 "python3 prompt_logprobs_serve.py --model Qwen2.5-7B-Instruct" -- "$py" prompt_logprobs_serve.py --model Qwen2.5-7B-Instruct
run hf_yarn_config 120 "python3 hf_yarn_config.py --model $W/yarn-longctx-7b" -- "$py" hf_yarn_config.py --model $W/yarn-longctx-7b

# llama.cpp probes, once the build is done
if [ -d "$LLAMA_SRC" ] && [ -z "$H7_NO_LLAMA" ]; then
  if [ -n "$bld" ]; then
    while kill -0 $bld 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 2; done
    if kill -0 $bld 2>/dev/null; then
      echo "llama.cpp build still running at ${SECONDS}s; stopped" >> "$out/skipped.txt"; kill -- -$bld 2>/dev/null
    else
      wait $bld; echo "llama.cpp build exit $? at ${SECONDS}s" >> "$out/times.txt"
    fi
    tail -c 20000 "$out/llama-build.txt" > "$out/llama-build-tail.txt"; rm -f "$out/llama-build.txt"
  fi
  wait
  if [ -x $LLAMA_DIR/build/bin/llama-server ]; then
    L=./build/bin
    run llama_split_shard 45 "$L/llama-server -m $MODELS/storyteller-7b/storyteller-7b-f16-00001-of-00003.gguf -c 4096 -ngl 99 --host 127.0.0.1 --port 8101" -- bash llama_split_shard.sh
    run llama_unknown_arch 45 "$L/llama-server -m $MODELS/qwen4-mini-f16.gguf -c 8192 -ngl 99 --host 127.0.0.1 --port 8102" -- bash llama_unknown_arch.sh
    run llama_lora_base 45 "$L/llama-server -m $MODELS/tiny-chat-f16.gguf --lora $MODELS/lora-chat-assistant-f16.gguf -c 4096 -ngl 99 --host 127.0.0.1 --port 8103" -- bash llama_lora_base.sh
    # llama_container_nommap: the first run of 2026-12-06 used --no-mmap, which this llama.cpp no longer accepts
    # ("error: invalid argument: --no-mmap"); the script now says --load-mode none and ran later that day (case h7-015)
    run llama_container_nommap 90 "bash llama_container_nommap.sh" -- bash llama_container_nommap.sh "$out/llama_container_nommap.setup"
  fi
fi
pack
if [ -n "$H7_SAVE_BIN" ] && [ -x $LLAMA_DIR/build/bin/llama-server ] && [ "$SECONDS" -lt 570 ]; then
  tar czf - -C $LLAMA_DIR/build bin | split -b 15m - "$H7_SAVE_BIN/llama-bin.tgz."
fi
ls -la "$out"; cat "$out/times.txt" "$out/skipped.txt" 2>/dev/null
