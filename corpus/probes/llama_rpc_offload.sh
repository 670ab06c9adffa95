#!/usr/bin/env bash
# llama.cpp RPC offload: a ggml-rpc-server is started on the GPU host, and llama-server is pointed at that host's address
# with --rpc to put layers on the remote device.
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
HOST_IP=${RPC_HOST_IP:-$(python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(('10.255.255.255', 1)); print(s.getsockname()[0])" 2>/dev/null)}
HOST_IP=${HOST_IP:-127.0.1.1}
echo "\$ ./build/bin/ggml-rpc-server -p 50052 &"
stdbuf -oL ./build/bin/ggml-rpc-server -p 50052 2>&1 &
rpc=$!
sleep 3
echo "\$ ./build/bin/llama-server -m ${MODELS:-/models}/tiny-chat-f16.gguf --rpc $HOST_IP:50052 -ngl 99 --port 8096"
./build/bin/llama-server -m "${MODELS:-/models}/tiny-chat-f16.gguf" --rpc "$HOST_IP:50052" -ngl 99 --host 127.0.0.1 --port 8096
rc=$?
kill "$rpc" 2>/dev/null; wait "$rpc" 2>/dev/null
exit $rc
