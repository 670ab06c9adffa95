# Shared helpers for the probe runners (run-h8.sh and later rounds); source it, do not run it.
#
#   probe_init OUTDIR            sets $out (made if missing) and $py (the device venv's python, else python3), exports the
#                                engine-style environment (unbuffered Python, offline Hugging Face)
#   probe_env                    writes $out/env.txt: GPU, driver, torch/triton/transformers/cupy/jax, nvcc, cmake, kernel
#   run NAME TIMEOUT SHOWN -- CMD...
#                                runs CMD under `timeout TIMEOUT`; $out/NAME.log starts with "$ SHOWN", holds CMD's combined
#                                stdout/stderr, and ends with "exit code N"; then re-packs the tgz (pack)
#   pack                         tar czf $PROBE_TAR of $out (when PROBE_TAR is set), so a cut-off call still returns logs
#
# Settings (environment): PROBE_ONLY="name ..." runs only those programs; PROBE_DEADLINE (seconds since the runner
# started, default 520): no program starts after it (listed in $out/skipped.txt); PROBE_TAR=path.tgz.

probe_init() {
  out="${1:-/tmp/probe}"; mkdir -p "$out"
  py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
  export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
  export PATH="$(dirname "$py"):$PATH"
  PROBE_DEADLINE=${PROBE_DEADLINE:-520}
}

pack() { [ -n "$PROBE_TAR" ] && tar czf "$PROBE_TAR" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null; return 0; }

probe_wanted() { [ -z "$PROBE_ONLY" ] || [[ " $PROBE_ONLY " == *" $1 "* ]]; }

# run NAME TIMEOUT SHOWN-COMMAND -- COMMAND...
run() {
  local name=$1 t=$2 shown=$3; shift 4
  probe_wanted "$name" || return 0
  if [ "$SECONDS" -gt "$PROBE_DEADLINE" ]; then echo "skipped $name (deadline)" >> "$out/skipped.txt"; return 0; fi
  { echo "\$ $shown"; timeout "$t" "$@" 2>&1; echo "exit code $?"; } > "$out/$name.log" 2>&1
  echo "$name done at ${SECONDS}s" >> "$out/times.txt"; pack
}

probe_env() {
  { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    "$py" -c "import torch, triton, transformers, cupy, jax; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'transformers', transformers.__version__, 'cupy', cupy.__version__, 'jax', jax.__version__, torch.cuda.get_device_name(), torch.cuda.get_device_capability())"
    nvcc --version | tail -2; cmake --version | head -1; gcc --version | head -1; "$py" --version; uname -r; nproc
    grep MemTotal /proc/meminfo; echo "vm.overcommit_memory=$(cat /proc/sys/vm/overcommit_memory)"; date -u; } > "$out/env.txt" 2>&1
}
