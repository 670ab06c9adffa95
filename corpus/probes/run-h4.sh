#!/usr/bin/env bash
# Fourth round of probes (h4-*): each program's combined output, one log per program, starting with the command and
# ending with its exit code.   run-h4.sh OUTDIR   (H4_TAR=path.tgz re-packs OUTDIR after every program)
cd "$(dirname "$0")"
out="${1:-/tmp/probe-h4}"; mkdir -p "$out"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
export PYTHONUNBUFFERED=1
export PATH="$(dirname "$py"):$PATH"
deadline=${H4_DEADLINE:-480}
pack() { [ -n "$H4_TAR" ] && tar czf "$H4_TAR" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null; }
# run NAME TIMEOUT SHOWN-COMMAND -- COMMAND...
run() {
  local name=$1 t=$2 shown=$3; shift 4
  if [ "$SECONDS" -gt "$deadline" ]; then echo "skipped $name (deadline)" >> "$out/skipped.txt"; return; fi
  { echo "\$ $shown"; timeout "$t" "$@" 2>&1; echo "exit code $?"; } > "$out/$name.log" 2>&1
  echo "$name done at ${SECONDS}s" >> "$out/times.txt"; pack
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$py" -c "import torch, triton, transformers, jax; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version(), 'triton', triton.__version__, 'transformers', transformers.__version__, 'jax', jax.__version__, torch.cuda.get_device_name(), torch.cuda.get_device_capability())"; nvcc --version | tail -2; "$py" --version; df -h /dev/shm; uname -r; date -u; } > "$out/env.txt" 2>&1

# setup (not probes): small random checkpoints, native libraries, and the old-ABI extension build in the background
W=/tmp/h4; mkdir -p $W
"$py" h4_make_models.py $W > "$out/setup-models.txt" 2>&1
( "$py" build_custom_ops.py $W/ext > "$out/setup-custom-ops.txt" 2>&1 ) &
bld=$!
{ gcc -O2 -shared -fPIC -o $W/libfastsample.so fastsample.c && \
  g++ -O2 -shared -fPIC -std=c++17 $("$py" -m pybind11 --includes) detok_native.cpp -o $W/detok_native$("$py" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))") && \
  nvcc -O2 -gencode arch=compute_90,code=sm_90 --resource-usage -o $W/ln_serve ln_serve.cu; } > "$out/setup-native.txt" 2>&1

# CPU-side gloo group beside the rest (each rank holds only a few MB on the GPU)
( run dp_scheduler_sync 120 "torchrun --nproc_per_node 2 dp_scheduler_sync.py" -- "$py" -m torch.distributed.run --standalone --nproc_per_node=2 dp_scheduler_sync.py ) &
bg=$!

run hf_flash_attn2_serve 90 "python3 hf_flash_attn2_serve.py --model $W/llama-base-260m --attn-implementation flash_attention_2" -- "$py" hf_flash_attn2_serve.py --model $W/llama-base-260m --attn-implementation flash_attention_2
run remote_code_serve 90 "python3 remote_code_serve.py --model $W/moonlite-7b-instruct --max-model-len 4096 --port 8000" -- "$py" remote_code_serve.py --model $W/moonlite-7b-instruct --max-model-len 4096 --port 8000
run pt_ckpt_loader 90 "python3 pt_ckpt_loader.py --config $W/llama-base-260m --checkpoint $W/ckpt-step120000.pt" -- "$py" pt_ckpt_loader.py --config $W/llama-base-260m --checkpoint $W/ckpt-step120000.pt
run chat_offline 90 "python3 chat_offline.py --model $W/llama-base-260m" -- "$py" chat_offline.py --model $W/llama-base-260m
run nccl_ifname_init 90 "NCCL_SOCKET_IFNAME=ens5f0 NCCL_IB_DISABLE=1 NCCL_DEBUG=WARN torchrun --nproc_per_node 1 nccl_ifname_init.py" -- env NCCL_SOCKET_IFNAME=ens5f0 NCCL_IB_DISABLE=1 NCCL_DEBUG=WARN "$py" -m torch.distributed.run --standalone --nproc_per_node=1 nccl_ifname_init.py
run triton_decode_gemm 120 "python3 triton_decode_gemm.py" -- "$py" triton_decode_gemm.py
run memfrac_colocate 90 "python3 memfrac_colocate.py --model llama-8b-instruct --gpu-memory-fraction 0.1" -- "$py" memfrac_colocate.py --model llama-8b-instruct --gpu-memory-fraction 0.1
run sampler_native 90 "python3 sampler_native.py $W/libfastsample.so" -- "$py" sampler_native.py $W/libfastsample.so
run detok_stream 90 "python3 detok_stream.py $W" -- "$py" detok_stream.py $W
run ln_serve 60 "./ln_serve 5120" -- $W/ln_serve 5120
wait $bld
run custom_ops_serve 60 "python3 custom_ops_serve.py --model llama-base-260m --ops-path $W/ext" -- "$py" custom_ops_serve.py --model llama-base-260m --ops-path $W/ext
wait $bg; pack

# These need the GPU (or the host's /dev/shm) to themselves.
run shm_weight_loader 90 "python3 shm_weight_loader.py" -- unshare -m sh -c "mount -t tmpfs -o size=64m tmpfs /dev/shm && exec '$py' shm_weight_loader.py"
run jax_two_replicas 200 "" -- bash jax_two_replicas.sh
sed -i '1{/^\$ $/d}' "$out/jax_two_replicas.log"
pack
ls -la "$out"
