"""Tiny HTTP client used by the round-10 llama.cpp probes (as the users' own scripts would call the server): waits for
/health, sends one request, prints the reply; exits 1 on an HTTP error."""
import json, sys, time, urllib.error, urllib.request


def wait_ready(base, timeout=60):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as r:
                if r.status == 200:
                    return True
        except Exception:
            pass
        time.sleep(0.5)
    return False


def post(base, route, body):
    req = urllib.request.Request(base + route, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def main():
    base, route, body_file = sys.argv[1], sys.argv[2], sys.argv[3]
    body = json.load(open(body_file))
    if not wait_ready(base):
        print(f"client: server at {base} never became ready", flush=True)
        sys.exit(2)
    print(f"client: POST {route} ({len(json.dumps(body))} bytes)", flush=True)
    try:
        out = post(base, route, body)
    except urllib.error.HTTPError as e:
        print(f"client: HTTP {e.code} {e.reason}: {e.read().decode(errors='replace')}", flush=True)
        sys.exit(1)
    print("client: " + json.dumps(out)[:600], flush=True)


if __name__ == "__main__":
    main()
