#!/usr/bin/env bash
# llama.cpp server for a document-summarisation service: 16 parallel slots for throughput in an 8k context
# (the model card says 8k), then a summarisation request for a ~900-word document.
here=$(cd "$(dirname "$0")" && pwd)
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
body=$(mktemp)
"${PY:-python3}" - "$body" <<'PY'
import json, sys
words = ("the a of to and in is it you that he was for on are with as his they be at one have this from or had by "
         "not word but what some we can out other were all there when up use your how said an each she which do their "
         "time if will way about many then them write would like so these her long make thing see him two has look "
         "more day could go come did number sound no most people my over know water than call first who may down").split()
doc = " ".join(words[(i * 7) % len(words)] for i in range(900))
prompt = "<|im_start|>user\nSummarise the following document in three sentences.\n\n" + doc + "<|im_end|>\n<|im_start|>assistant\n"
json.dump({"prompt": prompt, "n_predict": 128, "temperature": 0.2}, open(sys.argv[1], "w"))
PY
./build/bin/llama-server -m "${MODELS:-/models}/tiny-chat-f16.gguf" -c 8192 -np 16 -ngl 99 --host 127.0.0.1 --port 8132 &
srv=$!
"${PY:-python3}" "$here/h10_client.py" http://127.0.0.1:8132 /completion "$body"
rc=$?
kill $srv 2>/dev/null; wait $srv 2>/dev/null
exit $rc
