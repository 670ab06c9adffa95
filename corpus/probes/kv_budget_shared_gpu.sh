#!/usr/bin/env bash
# Another job already holds ~45% of the GPU; the engine still sizes its KV cache from the GPU's total memory.
cd "$(dirname "$0")"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
ready=$(mktemp -u); "$py" gpu_tenant_hold.py "$ready" 150 >/dev/null 2>&1 &
holder=$!
for i in $(seq 60); do [ -f "$ready" ] && break; sleep 1; done
echo "\$ python3 kv_budget_engine.py --gpu-memory-utilization 0.9"
timeout 120 "$py" kv_budget_engine.py --gpu-memory-utilization 0.9 2>&1
rc=$?
kill $holder 2>/dev/null; wait $holder 2>/dev/null
exit $rc
