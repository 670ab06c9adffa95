// decode_attn: single-query attention over a paged KV cache for the C++ server (one CTA per (sequence, kv head)).
// The K and V pages of one step are staged in shared memory. v2: head_dim 256 for the Gemma-2 family
// (was HEAD_DIM 128, KV_TILE 64).
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

#ifndef HEAD_DIM
#define HEAD_DIM 256
#endif
#define KV_TILE 64
#define GQA_GROUP 2

extern "C" __global__ void __launch_bounds__(256)
decode_attn_paged(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k_cache,
                  const __nv_bfloat16 *__restrict__ v_cache, const int32_t *__restrict__ block_table,
                  const int32_t *__restrict__ seq_lens, __nv_bfloat16 *__restrict__ out, int max_blocks,
                  int n_kv_heads, float scale) {
  __shared__ __nv_bfloat16 k_tile[KV_TILE][HEAD_DIM];
  __shared__ __nv_bfloat16 v_tile[KV_TILE][HEAD_DIM];
  __shared__ float q_s[GQA_GROUP][HEAD_DIM];
  __shared__ float scores[GQA_GROUP][KV_TILE];
  const int seq = blockIdx.x, kvh = blockIdx.y, tid = threadIdx.x;
  const int len = seq_lens[seq];
  for (int i = tid; i < GQA_GROUP * HEAD_DIM; i += blockDim.x)
    q_s[i / HEAD_DIM][i % HEAD_DIM] =
        __bfloat162float(q[((size_t)seq * n_kv_heads * GQA_GROUP + kvh * GQA_GROUP + i / HEAD_DIM) * HEAD_DIM + i % HEAD_DIM]);
  float m[GQA_GROUP], l[GQA_GROUP], acc[GQA_GROUP];
  for (int g = 0; g < GQA_GROUP; ++g) { m[g] = -1e30f; l[g] = 0.f; acc[g] = 0.f; }
  for (int t0 = 0; t0 < len; t0 += KV_TILE) {
    const int blk = block_table[seq * max_blocks + t0 / KV_TILE];
    __syncthreads();
    for (int i = tid; i < KV_TILE * HEAD_DIM; i += blockDim.x) {
      size_t off = (((size_t)blk * n_kv_heads + kvh) * KV_TILE + i / HEAD_DIM) * HEAD_DIM + i % HEAD_DIM;
      k_tile[i / HEAD_DIM][i % HEAD_DIM] = k_cache[off];
      v_tile[i / HEAD_DIM][i % HEAD_DIM] = v_cache[off];
    }
    __syncthreads();
    for (int i = tid; i < GQA_GROUP * KV_TILE; i += blockDim.x) {
      const int g = i / KV_TILE, t = i % KV_TILE;
      float s = 0.f;
      for (int d = 0; d < HEAD_DIM; ++d) s += q_s[g][d] * __bfloat162float(k_tile[t][d]);
      scores[g][t] = (t0 + t < len) ? s * scale : -1e30f;
    }
    __syncthreads();
    for (int g = 0; g < GQA_GROUP; ++g) {
      float mx = m[g];
      for (int t = 0; t < KV_TILE; ++t) mx = fmaxf(mx, scores[g][t]);
      float corr = __expf(m[g] - mx);
      l[g] *= corr; acc[g] *= corr;
      for (int t = 0; t < KV_TILE; ++t) {
        float p = __expf(scores[g][t] - mx);
        l[g] += p;
        if (tid < HEAD_DIM) acc[g] += p * __bfloat162float(v_tile[t][tid]);
      }
      m[g] = mx;
    }
  }
  if (tid < HEAD_DIM)
    for (int g = 0; g < GQA_GROUP; ++g)
      out[((size_t)seq * n_kv_heads * GQA_GROUP + kvh * GQA_GROUP + g) * HEAD_DIM + tid] = __float2bfloat16(acc[g] / l[g]);
}
