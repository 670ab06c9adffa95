#!/usr/bin/env bash
# Two data-parallel JAX replicas started on the same host, both with the default environment; the host has one GPU.
cd "$(dirname "$0")"
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
ready=$(mktemp -u)
echo "\$ python3 jax_replica.py --replica 0 --serve-seconds 90 &  python3 jax_replica.py --replica 1"
"$py" jax_replica.py --replica 0 --ready-file "$ready" --serve-seconds 90 2>&1 &
r0=$!
for i in $(seq 90); do [ -f "$ready" ] && break; kill -0 $r0 2>/dev/null || break; sleep 1; done
"$py" jax_replica.py --replica 1 2>&1
rc=$?
kill $r0 2>/dev/null; wait $r0 2>/dev/null
exit $rc
