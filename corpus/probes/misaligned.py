"""A vectorised (float4) load from an offset pointer in decode: misaligned address."""
import cupy as cp, numpy as np, common
log = common.log("worker")
kernel = cp.RawKernel(r'''
extern "C" __global__ void rmsnorm_vec4(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i * 4 < n) {
        float4 v = reinterpret_cast<const float4*>(x)[i];
        float s = v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        out[i] = rsqrtf(s / 4.0f + 1e-6f);
    }
}''', "rmsnorm_vec4")
log.info("cupy %s on %s", cp.__version__, cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
buf = cp.random.rand(1 << 20, dtype=cp.float32)
out = cp.empty(1 << 18, dtype=cp.float32)
for step in range(3):
    offset = 0 if step < 2 else 1  # a view one float past an aligned start
    view = buf[offset:]
    log.info("decode step %d: rmsnorm on hidden states (offset %d)", step, offset)
    kernel(((1 << 18) // 256,), (256,), (view, out, np.int32((1 << 20) - 4)))
    log.info("decode step %d done: %.4f", step, float(out[:8].sum()))
