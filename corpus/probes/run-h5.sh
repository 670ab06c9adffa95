#!/usr/bin/env bash
# Fifth round of probes (h5-*): each program's combined output, one log per program, starting with the command and
# ending with its exit code.   run-h5.sh OUTDIR   (H5_TAR=path.tgz re-packs OUTDIR after every program;
# H5_ONLY="name ..." runs only those programs)
cd "$(dirname "$0")"
out="${1:-/tmp/probe-h5}"; mkdir -p "$out"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export PATH="$(dirname "$py"):$PATH"
deadline=${H5_DEADLINE:-470}
pack() { [ -n "$H5_TAR" ] && tar czf "$H5_TAR" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null; }
# run NAME TIMEOUT SHOWN-COMMAND -- COMMAND...
run() {
  local name=$1 t=$2 shown=$3; shift 4
  if [ -n "$H5_ONLY" ] && [[ " $H5_ONLY " != *" $name "* ]]; then return; fi
  if [ "$SECONDS" -gt "$deadline" ]; then echo "skipped $name (deadline)" >> "$out/skipped.txt"; return; fi
  { echo "\$ $shown"; timeout "$t" "$@" 2>&1; echo "exit code $?"; } > "$out/$name.log" 2>&1
  echo "$name done at ${SECONDS}s" >> "$out/times.txt"; pack
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$py" -c "import torch, triton, transformers, cupy, jax; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__, 'cupy', cupy.__version__, 'jax', jax.__version__, torch.cuda.get_device_name(), torch.cuda.get_device_capability())"; nvcc --version | tail -2; "$py" --version; uname -r; date -u; } > "$out/env.txt" 2>&1

# setup (not probes): a remote-code model folder, a LoRA adapter, the C++ runtime build in the background
W=/tmp/h5; mkdir -p $W
"$py" h5_setup.py $W > "$out/setup.txt" 2>&1
( nvcc -O2 -gencode arch=compute_90,code=sm_90 -o $W/weight_upload weight_upload.cu > "$out/setup-nvcc.txt" 2>&1 ) &
bld=$!

run lora_adapter_serve 90 "python3 lora_adapter_serve.py --model llama-tiny-2b --dtype bfloat16 --enable-lora --lora-modules sql-lora=$W/sql-lora" -- "$py" lora_adapter_serve.py --model llama-tiny-2b --dtype bfloat16 --enable-lora --lora-modules sql-lora=$W/sql-lora
run rope_profile_run 90 "python3 rope_profile_run.py --model qwen2-1.5b-like --max-num-batched-tokens 8192" -- "$py" rope_profile_run.py --model qwen2-1.5b-like --max-num-batched-tokens 8192
run remote_code_v5_load 90 "python3 remote_code_v5_load.py --model $W/kimi-k2-mini --trust-remote-code" -- "$py" remote_code_v5_load.py --model $W/kimi-k2-mini --trust-remote-code
run moe_deterministic_serve 90 "python3 moe_deterministic_serve.py --model mixtral-tiny --enable-deterministic-inference" -- "$py" moe_deterministic_serve.py --model mixtral-tiny --enable-deterministic-inference
run triton_kv_store 120 "python3 triton_kv_store.py --kv-cache-gib 5" -- "$py" triton_kv_store.py --kv-cache-gib 5
run graph_replay_realloc 90 "python3 graph_replay_realloc.py --max-num-seqs 8" -- "$py" graph_replay_realloc.py --max-num-seqs 8
run cupy_fused_kernels 90 "python3 cupy_fused_kernels.py --port 8080" -- "$py" cupy_fused_kernels.py --port 8080
run jax_prefill_jit 120 "python3 jax_prefill_jit.py --max-seq-len 2048" -- "$py" jax_prefill_jit.py --max-seq-len 2048
run fork_workers 90 "python3 fork_workers.py --model llama-3.1-8b-instruct --num-workers 1" -- "$py" fork_workers.py --model llama-3.1-8b-instruct --num-workers 1
run hf_sampling_request 90 "python3 hf_sampling_request.py" -- "$py" hf_sampling_request.py
wait $bld
run weight_upload 60 "nvcc -O2 -gencode arch=compute_90,code=sm_90 -o weight_upload weight_upload.cu && ./weight_upload" -- $W/weight_upload

# These need the GPU to themselves (the last one leaves a kernel spinning until the process exits).
run cublas_after_kv_pool 90 "python3 cublas_after_kv_pool.py --model llama-3.2-3b-like --gpu-memory-utilization 1.0" -- "$py" cublas_after_kv_pool.py --model llama-3.2-3b-like --gpu-memory-utilization 1.0
run overlap_decode_hang 90 "python3 overlap_decode_hang.py --enable-overlap-schedule --step-timeout 20" -- "$py" overlap_decode_hang.py --enable-overlap-schedule --step-timeout 20
pack
ls -la "$out"
