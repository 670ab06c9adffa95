"""triton.py: the team's helper for the Triton Inference Server deployment (health check and a smoke-test request),
kept in the serving folder next to serve.py. Copied there as triton.py by h8_setup.py (not a probe)."""
import argparse
import json
import sys

DEFAULT_URL = "localhost:8001"


def smoke_test(url=DEFAULT_URL, model="llama3-8b-instruct", prompt="Hello"):
    import tritonclient.grpc as grpcclient  # only needed when the helper is run
    client = grpcclient.InferenceServerClient(url=url)
    if not client.is_server_ready():
        print("triton server not ready", file=sys.stderr)
        return 1
    import numpy as np
    inp = grpcclient.InferInput("text_input", [1, 1], "BYTES")
    inp.set_data_from_numpy(np.array([[prompt.encode()]], dtype=object))
    res = client.infer(model, [inp])
    print(json.dumps({"text_output": res.as_numpy("text_output")[0].decode()}))
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default=DEFAULT_URL)
    ap.add_argument("--model", default="llama3-8b-instruct")
    ap.add_argument("--prompt", default="Hello")
    a = ap.parse_args()
    sys.exit(smoke_test(a.url, a.model, a.prompt))
