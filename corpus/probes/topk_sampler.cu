// Top-k / top-p sampling kernels of a small C++ inference server (libsampler.so): per-request radix sort of the
// logits with CUB's block-level primitives, then a prefix sum for nucleus filtering.
// Build: make (see topk_sampler_Makefile)
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <cstdint>

namespace sampler {

constexpr int kThreads = 256;
constexpr int kItems = 16;

template <int THREADS, int ITEMS>
__global__ void topk_sort_kernel(const float *__restrict__ logits, int vocab, int k, float *__restrict__ top_vals,
                                 int32_t *__restrict__ top_ids) {
  using Sort = cub::BlockRadixSort<float, THREADS, ITEMS, int32_t>;
  __shared__ typename Sort::TempStorage tmp;
  const float *row = logits + (size_t)blockIdx.x * vocab;
  float keys[ITEMS];
  int32_t vals[ITEMS];
  for (int i = 0; i < ITEMS; ++i) {
    int idx = threadIdx.x * ITEMS + i;
    float best = -INFINITY;
    int32_t arg = -1;
    for (int j = idx; j < vocab; j += THREADS * ITEMS)
      if (row[j] > best) { best = row[j]; arg = j; }
    keys[i] = best;
    vals[i] = arg;
  }
  Sort(tmp).SortDescending(keys, vals);
  for (int i = 0; i < ITEMS; ++i) {
    int r = threadIdx.x * ITEMS + i;
    if (r < k) { top_vals[(size_t)blockIdx.x * k + r] = keys[i]; top_ids[(size_t)blockIdx.x * k + r] = vals[i]; }
  }
}

template <int THREADS>
__global__ void top_p_kernel(float *__restrict__ top_vals, int k, float top_p) {
  using Scan = cub::BlockScan<float, THREADS>;
  __shared__ typename Scan::TempStorage tmp;
  float *row = top_vals + (size_t)blockIdx.x * k;
  float p = threadIdx.x < k ? __expf(row[threadIdx.x] - row[0]) : 0.f;
  float cum;
  Scan(tmp).InclusiveSum(p, cum);
  if (threadIdx.x < k && cum - p > top_p) row[threadIdx.x] = -INFINITY;
}

}  // namespace sampler

extern "C" int sampler_topk(const float *logits, int batch, int vocab, int k, float top_p, float *vals, int32_t *ids,
                            cudaStream_t s) {
  sampler::topk_sort_kernel<sampler::kThreads, sampler::kItems><<<batch, sampler::kThreads, 0, s>>>(logits, vocab, k,
                                                                                                  vals, ids);
  sampler::top_p_kernel<sampler::kThreads><<<batch, sampler::kThreads, 0, s>>>(vals, k, top_p);
  return (int)cudaGetLastError();
}
