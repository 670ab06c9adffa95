#!/usr/bin/env bash
# llama.cpp server for a structured-extraction job: each request carries a GBNF grammar (written by hand from the
# job's JSON schema) so the reply is a JSON object {"answer": ..., "confidence": ...}.
here=$(cd "$(dirname "$0")" && pwd)
cd "${LLAMA_DIR:-/opt/src/llama.cpp}" || exit 1
body=$(mktemp)
cat > "$body" <<'JSON'
{"prompt": "<|im_start|>user\nWhat is the capital of France? Reply in JSON.<|im_end|>\n<|im_start|>assistant\n",
 "n_predict": 64, "temperature": 0,
 "grammar": "root ::= \"{\" ws \"\\\"answer\\\":\" ws string \",\" ws \"\\\"confidence\\\":\" ws number ws \"}\"\nstring ::= \"\\\"\" [^\"]* \"\\\"\"\nnumber ::= [0-9]+ (\".\" [0-9]+)?\n"}
JSON
./build/bin/llama-server -m "${MODELS:-/models}/tiny-chat-f16.gguf" -c 4096 -ngl 99 --host 127.0.0.1 --port 8131 &
srv=$!
"${PY:-python3}" "$here/h10_client.py" http://127.0.0.1:8131 /completion "$body"
rc=$?
kill $srv 2>/dev/null; wait $srv 2>/dev/null
exit $rc
