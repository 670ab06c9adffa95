// A C++/CUDA serving engine's rotary-embedding kernel, launched with one block per (head, token). It serves a
// 128k-context model with chunked prefill disabled; request 2 is a 70,000-token document.
// Build: nvcc -O2 -arch=sm_90 -o rope_engine rope_long_prefill.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#define CUDA_CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error: %s\n  current device: 0, in function %s at %s:%d\n  %s\n", cudaGetErrorString(e_), \
          __func__, __FILE__, __LINE__, #x); abort(); } } while (0)

__global__ void rotary_embedding_kernel(__nv_bfloat16 *q, __nv_bfloat16 *k, const int *pos, const float *cos_sin,
                                        int n_heads, int n_kv_heads, int head_dim) {
  const int h = blockIdx.x, t = blockIdx.y, i = threadIdx.x, half = head_dim / 2;
  const float c = cos_sin[(size_t)pos[t] * head_dim + i], s = cos_sin[(size_t)pos[t] * head_dim + half + i];
  __nv_bfloat16 *qh = q + ((size_t)t * n_heads + h) * head_dim;
  float a = __bfloat162float(qh[i]), b = __bfloat162float(qh[i + half]);
  qh[i] = __float2bfloat16(a * c - b * s); qh[i + half] = __float2bfloat16(b * c + a * s);
  if (h < n_kv_heads) {
    __nv_bfloat16 *kh = k + ((size_t)t * n_kv_heads + h) * head_dim;
    a = __bfloat162float(kh[i]); b = __bfloat162float(kh[i + half]);
    kh[i] = __float2bfloat16(a * c - b * s); kh[i + half] = __float2bfloat16(b * c + a * s);
  }
}

static void launch_rope(__nv_bfloat16 *q, __nv_bfloat16 *k, const int *pos, const float *cs, int n_tokens, int n_heads,
                        int n_kv, int hd, cudaStream_t st) {
  dim3 grid(n_heads, n_tokens);
  rotary_embedding_kernel<<<grid, hd / 2, 0, st>>>(q, k, pos, cs, n_heads, n_kv, hd);
  CUDA_CHECK(cudaGetLastError());
}

int main(int argc, char **argv) {
  const int n_heads = 32, n_kv = 8, hd = 128, max_pos = 131072;
  int prompts[2] = {1200, 70000};
  for (int i = 1; i + 1 < argc; ++i) if (!strcmp(argv[i], "--long-prompt")) prompts[1] = atoi(argv[++i]);
  cudaDeviceProp prop; CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("engine: device %s, sm_%d%d, %.1f GiB\n", prop.name, prop.major, prop.minor, prop.totalGlobalMem / 1073741824.0);
  printf("engine: model llama-3.1-8b-128k n_heads=%d n_kv_heads=%d head_dim=%d max_position=%d rope_theta=500000\n",
         n_heads, n_kv, hd, max_pos);
  printf("engine: chunked_prefill=off max_num_batched_tokens=131072\n");
  float *cs; int *pos; __nv_bfloat16 *q, *k;
  CUDA_CHECK(cudaMalloc(&cs, (size_t)max_pos * hd * sizeof(float)));
  CUDA_CHECK(cudaMemset(cs, 0, (size_t)max_pos * hd * sizeof(float)));
  printf("engine: rope cache %d x %d built\n", max_pos, hd);
  const int max_tok = 131072;
  CUDA_CHECK(cudaMalloc(&pos, max_tok * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&q, (size_t)max_tok * n_heads * hd * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMalloc(&k, (size_t)max_tok * n_kv * hd * sizeof(__nv_bfloat16)));
  int *hpos = (int *)malloc(max_tok * sizeof(int));
  for (int i = 0; i < max_tok; ++i) hpos[i] = i;
  CUDA_CHECK(cudaMemcpy(pos, hpos, max_tok * sizeof(int), cudaMemcpyHostToDevice));
  cudaStream_t st; CUDA_CHECK(cudaStreamCreate(&st));
  printf("engine: server listening on 0.0.0.0:8080\n");
  for (int r = 0; r < 2; ++r) {
    printf("engine: request %d: prefill %d tokens\n", r + 1, prompts[r]);
    fflush(stdout);
    for (int layer = 0; layer < 32; ++layer) launch_rope(q, k, pos, cs, prompts[r], n_heads, n_kv, hd, st);
    CUDA_CHECK(cudaStreamSynchronize(st));
    printf("engine: request %d: prefill done, decoding\n", r + 1);
  }
  return 0;
}
