"""A custom gather kernel indexes past its table during prefill: an illegal memory access."""
import cupy as cp, numpy as np, common
log = common.log("runner")
kernel = cp.RawKernel(r'''
extern "C" __global__ void gather_rows(const float* table, const long long* idx, float* out, int dim, int n) {
    int i = blockIdx.x; int j = threadIdx.x;
    if (i < n && j < dim) out[i * dim + j] = table[idx[i] * dim + j];
}''', "gather_rows")
dim, rows = 128, 4096
log.info("cupy %s, device %s", cp.__version__, cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
table = cp.random.rand(rows, dim, dtype=cp.float32)
log.info("prefill: batch of 3 prompts, 700 tokens")
idx = cp.asarray(np.r_[np.arange(699), [1 << 40]], dtype=cp.int64)  # one corrupted position id
out = cp.empty((700, dim), dtype=cp.float32)
log.info("launching gather_rows kernel for 700 tokens")
kernel((700,), (dim,), (table, idx, out, np.int32(dim), np.int32(700)))
log.info("prefill done: checksum %.3f", float(out.sum()))
