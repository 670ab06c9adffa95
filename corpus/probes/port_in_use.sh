#!/usr/bin/env bash
# Another job already listens on the rendezvous port: torchrun cannot start its store.
py=/opt/torch/.venv/bin/python3; [ -x "$py" ] || py=python3
"$py" -c "import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0', 29511)); s.listen(); time.sleep(60)" &
holder=$!
sleep 1
echo "\$ torchrun --nnodes 1 --nproc_per_node 1 --master-addr 127.0.0.1 --master-port 29511 tp_rank_fault.py"
timeout 60 "$py" -m torch.distributed.run --nnodes 1 --nproc_per_node 1 --master-addr 127.0.0.1 --master-port 29511 --rdzv-backend static tp_rank_fault.py 2>&1
echo "exit code $?"
kill $holder 2>/dev/null
