#!/usr/bin/env bash
# Third round of probes (h3-*): each program's combined output, one log per program, starting with the command and ending
# with its exit code.   run-h3.sh OUTDIR   (H3_TAR=path.tgz re-packs OUTDIR after every program)
cd "$(dirname "$0")"
out="${1:-/tmp/probe-h3}"; mkdir -p "$out"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
export PYTHONUNBUFFERED=1
export PATH="$(dirname "$py"):$PATH"
deadline=${H3_DEADLINE:-500}
pack() { [ -n "$H3_TAR" ] && tar czf "$H3_TAR" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null; }
# run NAME TIMEOUT SHOWN-COMMAND -- COMMAND...
run() {
  local name=$1 t=$2 shown=$3; shift 4
  if [ "$SECONDS" -gt "$deadline" ]; then echo "skipped $name (deadline)" >> "$out/skipped.txt"; return; fi
  { echo "\$ $shown"; timeout "$t" "$@" 2>&1; echo "exit code $?"; } > "$out/$name.log" 2>&1
  echo "$name done at ${SECONDS}s" >> "$out/times.txt"; pack
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$py" -c "import torch, triton, transformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version(), 'triton', triton.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name(), torch.cuda.get_device_capability())"; nvcc --version | tail -2; which gcc cc clang; uname -r; date -u; } > "$out/env.txt" 2>&1

# CPU-only, runs beside the rest: a 2-node launch whose second node never comes up.
( run multinode_launch 90 "python3 multinode_launch.py --nnodes 2 --node-rank 0 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port 29533" -- "$py" multinode_launch.py --nnodes 2 --node-rank 0 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port 29533 ) &
bg=$!

mkdir -p /tmp/h3build
run rmsnorm_serve 120 "nvcc -O2 -gencode arch=compute_80,code=sm_80 -o rmsnorm_serve rmsnorm_serve.cu && ./rmsnorm_serve" -- bash -c "nvcc -O2 -gencode arch=compute_80,code=sm_80 -o /tmp/h3build/rmsnorm_serve rmsnorm_serve.cu && /tmp/h3build/rmsnorm_serve"
run triton_smem_tile 120 "python3 triton_smem_tile.py" -- "$py" triton_smem_tile.py
"$py" make_truncated_ckpt.py /tmp/h3-ckpt > "$out/make_truncated_ckpt.setup" 2>&1
run load_truncated_shard 90 "python3 load_truncated_shard.py /tmp/h3-ckpt" -- "$py" load_truncated_shard.py /tmp/h3-ckpt
run sdpa_flash_fp32 90 "python3 sdpa_flash_fp32.py --dtype float32 --attention-backend flash" -- "$py" sdpa_flash_fp32.py --dtype float32 --attention-backend flash
run tokenizer_revision 90 "python3 tokenizer_revision.py" -- "$py" tokenizer_revision.py
run gpt2_context_overflow 120 "python3 gpt2_context_overflow.py" -- "$py" gpt2_context_overflow.py
run graph_capture_hostsync 90 "python3 graph_capture_hostsync.py" -- "$py" graph_capture_hostsync.py
run compile_warmup_nocc 180 "PATH=$(dirname "$py") TRITON_CACHE_DIR=/tmp/h3-triton-nocc TORCHINDUCTOR_CACHE_DIR=/tmp/h3-inductor-nocc python3 compile_warmup_nocc.py" -- env PATH="$(dirname "$py")" TRITON_CACHE_DIR=/tmp/h3-triton-nocc TORCHINDUCTOR_CACHE_DIR=/tmp/h3-inductor-nocc "$py" compile_warmup_nocc.py
run tp_same_device 120 "torchrun --nproc_per_node 2 tp_same_device.py --device cuda:0" -- "$py" -m torch.distributed.run --standalone --nproc_per_node=2 tp_same_device.py --device cuda:0
run jit_rope_ext 240 "python3 jit_rope_ext.py" -- "$py" jit_rope_ext.py
wait $bg; pack

# These need the GPU (or the host) to themselves.
run kv_budget_shared_gpu 200 "" -- bash kv_budget_shared_gpu.sh
sed -i '1{/^\$ $/d}' "$out/kv_budget_shared_gpu.log"
run host_ram_limit 150 "" -- bash host_ram_limit.sh "$out/host_ram_limit.setup"
sed -i '1{/^\$ $/d}' "$out/host_ram_limit.log"
run decode_watchdog_hang 120 "python3 decode_watchdog_hang.py" -- "$py" decode_watchdog_hang.py
pack
ls -la "$out"
