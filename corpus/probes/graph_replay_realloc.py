"""Decode with CUDA graphs: one graph per batch size, replayed on static input buffers. A character-level
'next letter' model is used as the engine's self-test model: every output character is the one after its input."""
import argparse, string, time, torch, common
log = common.log("graph_runner")

ap = argparse.ArgumentParser()
ap.add_argument("--max-num-seqs", type=int, default=8)
args = ap.parse_args()
chars = string.ascii_lowercase
V = len(chars)
# logits[c] peaks at c+1: a deterministic next-letter model
W = torch.zeros(V, V, device="cuda")
for i in range(V):
    W[i, (i + 1) % V] = 10.0


def encode(s):
    return [chars.index(c) for c in s]


def decode(ids):
    return "".join(chars[i] for i in ids)


class GraphRunner:
    def __init__(self, max_bs):
        self.alloc_buffers(max_bs)
        self.capture()

    def alloc_buffers(self, max_bs):
        self.max_bs = max_bs
        self.input_ids = torch.zeros(max_bs, dtype=torch.long, device="cuda")
        self.out_ids = torch.zeros(max_bs, dtype=torch.long, device="cuda")
        log.info("decode buffers allocated for max_bs=%d", max_bs)

    def capture(self):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            self.out_ids.copy_((W[self.input_ids]).argmax(-1))
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        t0 = time.time()
        with torch.cuda.graph(self.graph):
            self.out_ids.copy_((W[self.input_ids]).argmax(-1))
        log.info("Capture cuda graph end. bs=%d elapsed=%.3f s", self.max_bs, time.time() - t0)

    def step(self, ids):
        n = ids.shape[0]
        self.input_ids[:n].copy_(ids)
        self.graph.replay()
        return self.out_ids[:n].clone()


def generate(runner, prompts, max_new):
    outs = []
    for p in prompts:
        ids = torch.tensor(encode(p), device="cuda")
        tok = W[ids].argmax(-1)[-1:]            # prefill (eager)
        gen = [tok.item()]
        for _ in range(max_new - 1):            # decode (graph replay)
            tok = runner.step(tok)
            gen.append(tok.item())
        outs.append(decode(gen))
    return outs


runner = GraphRunner(args.max_num_seqs)
log.info("self-test model loaded: next-letter, vocab=%d", V)
for rid, p in [("req-0", "abcd"), ("req-1", "hij")]:
    log.info("request %s prompt=%r -> output=%r", rid, p, generate(runner, [p], 8)[0])
new_max = args.max_num_seqs * 2
log.info("scheduler: raising max_num_seqs %d -> %d (queue depth 37)", args.max_num_seqs, new_max)
runner.alloc_buffers(new_max)
for rid, p in [("req-2", "mnop"), ("req-3", "qrs"), ("req-4", "efg")]:
    log.info("request %s prompt=%r -> output=%r", rid, p, generate(runner, [p], 8)[0])
