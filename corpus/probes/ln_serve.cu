// A tiny C++/CUDA serving loop: fused residual-add + LayerNorm kernel tuned for 256 threads per block, launched with one
// thread per 4 hidden elements.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <cuda_runtime.h>

static void logi(const char* fmt, const char* a = "", long b = 0, long c = 0) {
  time_t t = time(nullptr);
  char ts[32];
  strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", gmtime(&t));
  printf("[%s] INFO ", ts);
  printf(fmt, a, b, c);
  printf("\n");
  fflush(stdout);
}

#define CHECK(x)                                                                                      \
  do {                                                                                                \
    cudaError_t e = (x);                                                                              \
    if (e != cudaSuccess) {                                                                           \
      fprintf(stderr, "CUDA error %d (%s) at %s:%d: %s\n", (int)e, cudaGetErrorName(e), __FILE__, __LINE__, \
              cudaGetErrorString(e));                                                                 \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

constexpr int kVec = 4;

__global__ void __launch_bounds__(256, 2)
add_layernorm(float* __restrict__ x, const float* __restrict__ res, const float* __restrict__ gamma,
              const float* __restrict__ beta, int hidden) {
  extern __shared__ float red[];
  float v[kVec * 4];
  int row = blockIdx.x, tid = threadIdx.x;
  float* xr = x + (size_t)row * hidden;
  const float* rr = res + (size_t)row * hidden;
  float s = 0.f, ss = 0.f;
#pragma unroll
  for (int j = 0; j < kVec * 4; j++) {
    int i = (tid + j * blockDim.x / 4) % hidden;
    v[j] = xr[i] + rr[i];
    s += v[j];
    ss += v[j] * v[j];
  }
  red[tid] = s;
  red[blockDim.x + tid] = ss;
  __syncthreads();
  for (int off = blockDim.x / 2; off > 0; off >>= 1) {
    if (tid < off) {
      red[tid] += red[tid + off];
      red[blockDim.x + tid] += red[blockDim.x + tid + off];
    }
    __syncthreads();
  }
  float mean = red[0] / (kVec * 4 * blockDim.x), var = red[blockDim.x] / (kVec * 4 * blockDim.x) - mean * mean;
  float inv = rsqrtf(var + 1e-5f);
#pragma unroll
  for (int j = 0; j < kVec; j++) {
    int i = tid * kVec + j;
    if (i < hidden) xr[i] = (v[j] - mean) * inv * gamma[i] + beta[i];
  }
}

int main(int argc, char** argv) {
  int hidden = argc > 1 ? atoi(argv[1]) : 5120, layers = 8, tokens = 512;
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  logi("device %s, sm_%ld%ld", p.name, p.major, p.minor);
  logi("model config: %s hidden_size=%ld num_layers=%ld", "dense-13b", hidden, layers);
  size_t n = (size_t)tokens * hidden;
  float *x, *res, *g, *b;
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&res, n * 4));
  CHECK(cudaMalloc(&g, (size_t)layers * hidden * 4));
  CHECK(cudaMalloc(&b, (size_t)layers * hidden * 4));
  std::vector<float> ones((size_t)layers * hidden, 1.f);
  CHECK(cudaMemcpy(g, ones.data(), ones.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(b, 0, (size_t)layers * hidden * 4));
  logi("weights loaded (%s), %ld layers, %ld MiB", "norm params", layers, (long)((size_t)layers * hidden * 8 >> 20));
  CHECK(cudaMemset(x, 0, n * 4));
  CHECK(cudaMemset(res, 0, n * 4));
  logi("server ready%s; request 0: prefill %ld tokens", "", tokens);
  int threads = hidden / kVec;
  if (threads > 1024) threads = 1024;
  for (int l = 0; l < layers; l++) {
    add_layernorm<<<tokens, threads, 2 * threads * sizeof(float)>>>(x, res, g + (size_t)l * hidden, b + (size_t)l * hidden,
                                                                    hidden);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  logi("request 0: prefill done%s (%ld tokens, %ld layers)", "", tokens, layers);
  return 0;
}
