"""A paged-KV decode engine: a block manager hands out 16-token KV blocks, a CUDA kernel (CuPy/NVRTC) writes each new
token's K/V into its slot, and attention reads the sequence back through the block table."""
import argparse, time
import cupy as cp
import torch
import torch.nn.functional as F
import common

log = common.log("engine")
ap = argparse.ArgumentParser()
ap.add_argument("--model", default="llama-3.2-1b-like")
ap.add_argument("--block-size", type=int, default=16)
ap.add_argument("--num-gpu-blocks", type=int, default=8192)
ap.add_argument("--max-num-seqs", type=int, default=8)
args = ap.parse_args()

L, H, KVH, D, HID, VOCAB = 4, 16, 8, 64, 1024, 32000
BS = args.block_size
MAX_BLOCKS_PER_SEQ = 256
log.info("Initializing engine (v0.9.1) with config: model=%s, dtype=float16, block_size=%d, num_gpu_blocks=%d, "
         "max_num_seqs=%d, enforce_eager=True", args.model, BS, args.num_gpu_blocks, args.max_num_seqs)

RESHAPE_AND_CACHE = r'''
typedef unsigned short cache_t;  // fp16 bits, copied as is
extern "C" __global__ void reshape_and_cache(const cache_t* __restrict__ key, const cache_t* __restrict__ value,
    cache_t* __restrict__ k_cache, cache_t* __restrict__ v_cache, const unsigned int* __restrict__ block_tables,
    const int* __restrict__ positions, const int* __restrict__ seq_ids, int num_heads, int head_dim, int block_size,
    int max_blocks) {
  const int tok = blockIdx.x;
  const int pos = positions[tok];
  const unsigned int block = block_tables[seq_ids[tok] * max_blocks + pos / block_size];
  const int off = pos % block_size;
  const int n = num_heads * head_dim;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const size_t dst = ((size_t)block * block_size + off) * n + i;
    k_cache[dst] = key[(size_t)tok * n + i];
    v_cache[dst] = value[(size_t)tok * n + i];
  }
}
'''
kernel = cp.RawKernel(RESHAPE_AND_CACHE, "reshape_and_cache")
log.info("Compiled custom op reshape_and_cache (NVRTC, %s)", "sm_%d%d" % torch.cuda.get_device_capability())

torch.manual_seed(0)
W = {"embed": torch.randn(VOCAB, HID, device="cuda", dtype=torch.float16) * 0.02}
for l in range(L):
    W[f"{l}.qkv"] = torch.randn((H + 2 * KVH) * D, HID, device="cuda", dtype=torch.float16) * 0.02
    W[f"{l}.o"] = torch.randn(HID, H * D, device="cuda", dtype=torch.float16) * 0.02
log.info("Loading model weights took %.4f GB", sum(t.numel() * 2 for t in W.values()) / 1e9)

k_cache = [torch.zeros(args.num_gpu_blocks * BS * KVH * D, device="cuda", dtype=torch.float16) for _ in range(L)]
v_cache = [torch.zeros_like(k_cache[0]) for _ in range(L)]
log.info("# GPU blocks: %d, # CPU blocks: 0 (%.2f GiB KV cache)", args.num_gpu_blocks,
         2 * L * k_cache[0].numel() * 2 / 2**30)
block_tables = torch.full((args.max_num_seqs, MAX_BLOCKS_PER_SEQ), -1, dtype=torch.int32, device="cuda")


class BlockManager:
    def __init__(self, n):
        self.free = list(range(n - 1, -1, -1))
        self.tables = {}

    def allocate(self, sid, num_tokens):
        n = (num_tokens + BS - 1) // BS
        self.tables[sid] = [self.free.pop() for _ in range(n)]
        block_tables[sid, :n] = torch.tensor(self.tables[sid], dtype=torch.int32)

    def append_slot(self, sid, num_tokens):
        # num_tokens: the sequence length once this step's token is in; a full last block means a new one
        if num_tokens % BS == 0:
            b = self.free.pop()
            self.tables[sid].append(b)
            block_tables[sid, len(self.tables[sid]) - 1] = b

    def free_seq(self, sid):
        self.free.extend(self.tables.pop(sid))
        block_tables[sid].fill_(-1)


bm = BlockManager(args.num_gpu_blocks)
stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)


def write_kv(l, k, v, positions, seq_ids):
    with stream:
        kernel((k.shape[0],), (256,), (cp.asarray(k.contiguous()), cp.asarray(v.contiguous()), cp.asarray(k_cache[l]),
                                        cp.asarray(v_cache[l]), cp.asarray(block_tables), cp.asarray(positions),
                                        cp.asarray(seq_ids), cp.int32(KVH), cp.int32(D), cp.int32(BS),
                                        cp.int32(MAX_BLOCKS_PER_SEQ)))


def gather_kv(l, sid, n):
    blocks = block_tables[sid, :(n + BS - 1) // BS].long()
    kc = k_cache[l].view(-1, BS, KVH, D)[blocks].reshape(-1, KVH, D)[:n]
    vc = v_cache[l].view(-1, BS, KVH, D)[blocks].reshape(-1, KVH, D)[:n]
    return kc, vc


def forward(sid, tokens, start):
    n = len(tokens)
    x = W["embed"][torch.tensor(tokens, device="cuda")]
    positions = torch.arange(start, start + n, dtype=torch.int32, device="cuda")
    seq_ids = torch.full((n,), sid, dtype=torch.int32, device="cuda")
    for l in range(L):
        q, k, v = F.linear(x, W[f"{l}.qkv"]).split([H * D, KVH * D, KVH * D], -1)
        write_kv(l, k.view(n, KVH, D), v.view(n, KVH, D), positions, seq_ids)
        kc, vc = gather_kv(l, sid, start + n)
        kc = kc.repeat_interleave(H // KVH, 1).transpose(0, 1)
        vc = vc.repeat_interleave(H // KVH, 1).transpose(0, 1)
        o = F.scaled_dot_product_attention(q.view(n, H, D).transpose(0, 1), kc, vc, is_causal=(start == 0))
        x = x + F.linear(o.transpose(0, 1).reshape(n, H * D), W[f"{l}.o"])
    return (x[-1:] @ W["embed"].t()).argmax(-1).item()


def run_request(rid, sid, prompt_len, max_tokens):
    prompt = torch.randint(100, VOCAB, (prompt_len,)).tolist()
    bm.allocate(sid, prompt_len)
    t0 = time.time()
    tok = forward(sid, prompt, 0)
    out = [tok]
    log.info("%s: prefill %d tokens, blocks=%s, first token %d (%.1f ms)", rid, prompt_len, bm.tables[sid], tok,
             (time.time() - t0) * 1e3)
    n = prompt_len
    for step in range(max_tokens - 1):
        bm.append_slot(sid, n + 1)
        tok = forward(sid, [tok], n)
        n += 1
        out.append(tok)
    torch.cuda.synchronize()
    bm.free_seq(sid)
    log.info("%s: finished, %d output tokens in %.2fs", rid, len(out), time.time() - t0)
    return out


log.info("Warming up with a dummy request (prompt 20 tokens, 8 output tokens)")
run_request("warmup", 0, 20, 8)
log.info("Started server process; serving on http://0.0.0.0:8000")
for i, (plen, mt) in enumerate([(37, 20), (48, 20), (90, 16)]):
    rid = f"cmpl-{i:04d}"
    log.info("Received request %s: prompt_tokens=%d, max_tokens=%d", rid, plen, mt)
    run_request(rid, i + 1, plen, mt)
