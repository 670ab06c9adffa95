#!/usr/bin/env bash
# A container entrypoint: llama-server with part of the layers on the GPU (-ngl 4 of 32) and --load-mode none (no mmap), in a container
# whose memory limit is 1 GiB (memory.max of its cgroup). The cgroup set-up prints to $1 (beside the log), not to the log.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
setup="${1:-/dev/null}"
cg=/sys/fs/cgroup/h7-llama
{
  echo +memory > /sys/fs/cgroup/cgroup.subtree_control
  mkdir -p $cg && echo 1G > $cg/memory.max && (echo 0 > $cg/memory.swap.max || true)
  cat $cg/memory.max
} > "$setup" 2>&1
limit=$(cat $cg/memory.max 2>/dev/null)
args="-m ${MODELS:-/models}/story-2g-f16.gguf --load-mode none -ngl 4 -c 4096 --host 0.0.0.0 --port 8104"
if [ -n "$limit" ] && [ "$limit" != max ]; then
  echo "entrypoint: starting llama-server (model ${MODELS:-/models}/story-2g-f16.gguf, container memory limit $limit bytes)"
  bash -c "echo \$\$ > $cg/cgroup.procs && exec ./build/bin/llama-server $args"
else
  # no writable memory cgroup on this host (its set-up output is in $setup): the same 1 GiB as a data-segment limit
  echo "entrypoint: starting llama-server (model ${MODELS:-/models}/story-2g-f16.gguf, memory limit 1073741824 bytes, ulimit -d)"
  bash -c "ulimit -d 1048576 && exec ./build/bin/llama-server $args"
fi
rc=$?
echo "entrypoint: llama-server exited with code $rc"
[ -r $cg/memory.events ] && echo "entrypoint: cgroup memory.events: $(tr '\n' ' ' < $cg/memory.events)"
exit $rc
