#!/usr/bin/env bash
# Runs every probe on the device and keeps each one's combined output: the logs of corpus/cases/h2-*.
cd "$(dirname "$0")"
out="${OUT:-/tmp/probe-out}"; mkdir -p "$out"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
export PYTHONUNBUFFERED=1
for p in assert_stop_token cupy_oob graph_capture_oom shape_load missing_keys unknown_model_type fp16_nan_sample clean_serving; do
  { echo "\$ python3 $p.py"; timeout 120 "$py" $p.py 2>&1; echo "exit code $?"; } > "$out/$p.log" 2>&1
done
{ echo "\$ torchrun --nproc_per_node 2 tp_rank_fault.py"; timeout 180 "$py" -m torch.distributed.run --standalone --nproc_per_node=2 tp_rank_fault.py 2>&1; echo "exit code $?"; } > "$out/tp_rank_fault.log" 2>&1
ls -la "$out"
