#!/usr/bin/env bash
# Second round of probes (h2-010 and on).
cd "$(dirname "$0")"
out="${1:-/tmp/probe-out2}"; mkdir -p "$out"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
export PYTHONUNBUFFERED=1
for p in misaligned prefill_oom nan_argmax device_ordinal; do
  { echo "\$ python3 $p.py"; timeout 120 "$py" $p.py 2>&1; echo "exit code $?"; } > "$out/$p.log" 2>&1
done
{ echo "\$ CUDA_VISIBLE_DEVICES= python3 no_gpu_visible.py"; CUDA_VISIBLE_DEVICES= timeout 60 "$py" no_gpu_visible.py 2>&1; echo "exit code $?"; } > "$out/no_gpu_visible.log" 2>&1
bash port_in_use.sh > "$out/port_in_use.log" 2>&1
ls -la "$out"
