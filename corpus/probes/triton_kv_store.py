"""A paged KV-cache engine whose cache write is a Triton kernel (store_kv), run with a large KV pool."""
import argparse, time, torch, triton, triton.language as tl, common
log = common.log("engine")


@triton.jit
def store_kv(cache_ptr, kv_ptr, slot_ptr, stride_slot, D: tl.constexpr):
    pid = tl.program_id(0)
    slot = tl.load(slot_ptr + pid)
    offs = tl.arange(0, D)
    kv = tl.load(kv_ptr + pid * D + offs)
    tl.store(cache_ptr + slot * stride_slot + offs, kv)


ap = argparse.ArgumentParser()
ap.add_argument("--kv-cache-gib", type=float, default=5.0)
ap.add_argument("--page-size", type=int, default=16)
args = ap.parse_args()
kv_heads, head_dim, hidden, vocab = 8, 128, 1024, 32000
D = kv_heads * head_dim
log.info("torch %s triton %s on %s", torch.__version__, triton.__version__, torch.cuda.get_device_name())
torch.manual_seed(0)
wq = torch.randn(hidden, D, device="cuda", dtype=torch.bfloat16) * 0.02
emb = torch.randn(vocab, hidden, device="cuda", dtype=torch.bfloat16) * 0.02
log.info("Model weights loaded: %.2f GiB", torch.cuda.memory_allocated() / 2**30)
num_slots = int(args.kv_cache_gib * 2**30 / (D * 2)) // args.page_size * args.page_size
num_pages = num_slots // args.page_size
k_cache = torch.zeros(num_slots, D, device="cuda", dtype=torch.bfloat16)
log.info("KV cache allocated: %d pages x %d slots, %d slots, %.2f GiB (K only, 1 layer)", num_pages, args.page_size,
         num_slots, k_cache.numel() * 2 / 2**30)
free_pages = list(range(num_pages))


def write(hidden_states, slots):
    kv = (hidden_states @ wq).contiguous()
    store_kv[(kv.shape[0],)](k_cache, kv, slots, k_cache.stride(0), D=D)


def alloc_prefill(n):
    global free_pages
    npg = -(-n // args.page_size)
    pages, free_pages = free_pages[:npg], free_pages[npg:]
    return pages


plen = 512
log.info("Received request req-0: prompt_tokens=%d max_tokens=64", plen)
pages = alloc_prefill(plen)
slots = torch.tensor([p * args.page_size + i for p in pages for i in range(args.page_size)][:plen], device="cuda",
                     dtype=torch.int32)
ids = torch.randint(0, vocab, (plen,), device="cuda")
h = emb[ids]
write(h, slots)
tok = (h[-1] @ emb.T).argmax().item()
log.info("prefill req-0: %d tokens, %d pages, first token %d", plen, len(pages), tok)
pos = plen
for step in range(64):
    if pos % args.page_size == 0:
        pages.append(free_pages.pop())
    slot = torch.tensor([pages[-1] * args.page_size + pos % args.page_size], device="cuda", dtype=torch.int32)
    h = emb[torch.tensor([tok], device="cuda")]
    write(h, slot)
    tok = (h[-1] @ emb.T + k_cache[slot.long()].float().sum() * 0).argmax().item()
    pos += 1
    if step % 16 == 0:
        log.info("decode step %d: req-0 pos=%d pages=%d", step, pos, len(pages))
log.info("Finished request req-0: completion_tokens=64")
