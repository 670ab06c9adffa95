#!/usr/bin/env bash
# Runs host_ram_loader.py inside a 4 GiB memory cgroup (a container's --memory=4g): the kernel's OOM killer ends it.
# The cgroup set-up prints to host_ram_limit.setup (beside the log), not to the log.
cd "$(dirname "$0")"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
setup="${1:-/dev/null}"
cg=/sys/fs/cgroup/h3-container
{
  mount | grep cgroup
  cat /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/cgroup.subtree_control
  echo +memory > /sys/fs/cgroup/cgroup.subtree_control
  mkdir -p $cg && echo 4G > $cg/memory.max && (echo 0 > $cg/memory.swap.max || true)
  cat $cg/memory.max
  echo $$ > $cg/cgroup.procs && echo "joined $cg"
} > "$setup" 2>&1
echo "\$ python3 host_ram_loader.py"
"$py" host_ram_loader.py 2>&1
