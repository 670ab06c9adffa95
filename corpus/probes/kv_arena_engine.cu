// A C++/CUDA serving engine whose KV-cache arena is a process-wide singleton (a namespace-scope object): it is created
// before main, carves its blocks with cudaMalloc on first use, and frees them in its destructor. The engine serves a
// batch of requests from a file and exits normally.
// Build: nvcc -O2 -arch=sm_90 -o kv_arena_engine kv_arena_engine.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#define CUDA_CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error %d (%s): %s\n  at %s:%d in %s\n", (int)e_, cudaGetErrorName(e_), cudaGetErrorString(e_), \
          __FILE__, __LINE__, #x); fflush(stderr); abort(); } } while (0)

struct KVArena {
  std::vector<void *> blocks;
  size_t block_bytes = 0;
  void reserve(int n, size_t bytes) {
    block_bytes = bytes;
    for (int i = 0; i < n; ++i) { void *p; CUDA_CHECK(cudaMalloc(&p, bytes)); blocks.push_back(p); }
  }
  ~KVArena() {
    for (void *p : blocks) CUDA_CHECK(cudaFree(p));
    printf("[kv_arena] released %zu blocks\n", blocks.size());
  }
};
static KVArena g_kv_arena;  // engine-wide

__global__ void attend_decode(const __nv_bfloat16 *k, const __nv_bfloat16 *v, const float *q, float *o, int len, int hd) {
  int d = threadIdx.x; float acc = 0.f, den = 0.f;
  for (int t = 0; t < len; ++t) {
    float s = 0.f;
    for (int j = 0; j < hd; ++j) s += q[j] * __bfloat162float(k[(size_t)t * hd + j]);
    float e = __expf(s * 0.088f); den += e; acc += e * __bfloat162float(v[(size_t)t * hd + d]);
  }
  o[d] = acc / den;
}
__global__ void fill(__nv_bfloat16 *p, size_t n, float val) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) p[i] = __float2bfloat16(val * ((i % 7) - 3));
}

int main(int argc, char **argv) {
  int n_req = 4, max_new = 16;
  for (int i = 1; i + 1 < argc; ++i) if (!strcmp(argv[i], "--requests")) n_req = atoi(argv[++i]);
  cudaDeviceProp prop; CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("[engine] device %s sm_%d%d, %.1f GiB\n", prop.name, prop.major, prop.minor, prop.totalGlobalMem / 1073741824.0);
  const int hd = 128, block_tokens = 16, n_blocks = 2048;
  const size_t block_bytes = (size_t)block_tokens * hd * 2 * sizeof(__nv_bfloat16) * 32;  // K and V, 32 layers
  g_kv_arena.reserve(n_blocks, block_bytes);
  printf("[kv_arena] %d blocks x %d tokens (%.1f MiB each, %.2f GiB total)\n", n_blocks, block_tokens,
         block_bytes / 1048576.0, n_blocks * block_bytes / 1073741824.0);
  float *q, *o; CUDA_CHECK(cudaMalloc(&q, hd * sizeof(float))); CUDA_CHECK(cudaMalloc(&o, hd * sizeof(float)));
  CUDA_CHECK(cudaMemset(q, 0, hd * sizeof(float)));
  printf("[engine] batch mode: %d requests from requests.jsonl, max_new_tokens=%d\n", n_req, max_new);
  for (int r = 0; r < n_req; ++r) {
    const int prompt = 48 + 37 * r;
    __nv_bfloat16 *k = (__nv_bfloat16 *)g_kv_arena.blocks[8 * r], *v = k + (size_t)block_tokens * 4 * hd;
    fill<<<(prompt * hd + 255) / 256, 256>>>(k, (size_t)prompt * hd, 0.01f);
    fill<<<(prompt * hd + 255) / 256, 256>>>(v, (size_t)prompt * hd, 0.02f);
    for (int t = 0; t < max_new; ++t) attend_decode<<<1, hd>>>(k, v, q, o, prompt + t < 64 ? prompt + t : 64, hd);
    CUDA_CHECK(cudaDeviceSynchronize());
    printf("[engine] request %d: prompt_tokens=%d completion_tokens=%d finish_reason=length\n", r, prompt, max_new);
  }
  printf("[engine] all requests done; results written to results.jsonl\n");
  printf("[engine] shutting down\n");
  fflush(stdout);
  return 0;
}
