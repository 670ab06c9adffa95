#!/usr/bin/env bash
# h2-016: `rosetta run --probe` around openai_server.py, a torch server on the GPU whose position
# table is one short of the probe (it dies in decode), then the same launch with a longer table
# (ready, the probe answered). Needs a rosetta binary built for x86-64 Linux.
#   run-journal.sh ROSETTA OUT
set -u
cd "$(dirname "$0")"
rosetta="${1:?rosetta binary}"; out="${2:-/tmp/journal-out}"; mkdir -p "$out"
export PYTHONUNBUFFERED=1
j="$out/journal.sqlite"
"$rosetta" run --journal "$j" --probe --no-status --stall 180 --grace 10 \
  --note "H200: a torch server whose position table is one short of the probe" \
  -- python3 openai_server.py > "$out/run.txt" 2>&1; echo "rosetta exit $?" >> "$out/run.txt"
"$rosetta" run --journal "$j" --probe --no-status --stop-when-ready --stall 180 \
  -- python3 openai_server.py --max-position-embeddings 64 > "$out/run2.txt" 2>&1; echo "rosetta exit $?" >> "$out/run2.txt"
"$rosetta" findings --journal "$j" --format json > "$out/findings.json"
"$rosetta" findings --journal "$j" show 1 > "$out/show.txt"
"$rosetta" findings --journal "$j" diff 1 2 >> "$out/show.txt"
