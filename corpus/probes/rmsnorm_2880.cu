// A small C++/CUDA inference engine's fused residual-add + RMSNorm, vectorised over 1024-element passes (four floats
// per thread, 256 threads). Written for hidden sizes 4096/5120/8192; here it serves a model with hidden_size 2880.
// Build: nvcc -O2 -arch=sm_90 -o rmsnorm_engine rmsnorm_2880.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cmath>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "[engine] CUDA error %d (%s) at %s:%d: %s\n", (int)e_, cudaGetErrorString(e_), __FILE__, __LINE__, #x); \
  exit(1); } } while (0)

constexpr int THREADS = 256, VEC = 4, PASS = THREADS * VEC;

__global__ void fused_add_rmsnorm(float *__restrict__ x, float *__restrict__ residual, const float *__restrict__ w,
                                  int hidden, float eps) {
  const int row = blockIdx.x;
  float4 *xr = reinterpret_cast<float4 *>(x + (size_t)row * hidden);
  float4 *rr = reinterpret_cast<float4 *>(residual + (size_t)row * hidden);
  const float4 *wr = reinterpret_cast<const float4 *>(w);
  const int passes = (hidden + PASS - 1) / PASS;
  float ss = 0.f;
  for (int p = 0; p < passes; ++p) {
    int i = p * THREADS + threadIdx.x;
    float4 a = xr[i], b = rr[i];
    a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
    rr[i] = a;
    ss += a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w;
  }
  __shared__ float red[THREADS];
  red[threadIdx.x] = ss;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = rsqrtf(red[0] / hidden + eps);
  for (int p = 0; p < passes; ++p) {
    int i = p * THREADS + threadIdx.x;
    float4 a = rr[i], g = wr[i];
    xr[i] = make_float4(a.x * inv * g.x, a.y * inv * g.y, a.z * inv * g.z, a.w * inv * g.w);
  }
}

int main(int argc, char **argv) {
  int hidden = 2880, layers = 24, tokens = 37;
  const char *model = "gpt-oss-20b";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--model") && i + 1 < argc) model = argv[++i];
    else if (!strcmp(argv[i], "--hidden") && i + 1 < argc) hidden = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--prompt-tokens") && i + 1 < argc) tokens = atoi(argv[++i]);
  }
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  int rt = 0, drv = 0; cudaRuntimeGetVersion(&rt); cudaDriverGetVersion(&drv);
  printf("[engine] device 0: %s (sm_%d%d), runtime %d, driver %d\n", prop.name, prop.major, prop.minor, rt, drv);
  printf("[engine] model %s: hidden_size=%d num_layers=%d norm=fused_add_rmsnorm(vec%d x %d threads)\n", model, hidden,
         layers, VEC, THREADS);
  std::vector<float> hw((size_t)tokens * hidden), hg(hidden, 1.0f);
  for (size_t i = 0; i < hw.size(); ++i) hw[i] = sinf(0.001f * i);
  float *x, *res, *w;
  CK(cudaMalloc(&x, hw.size() * sizeof(float)));
  CK(cudaMalloc(&res, hw.size() * sizeof(float)));
  CK(cudaMalloc(&w, (size_t)layers * hidden * sizeof(float)));
  for (int l = 0; l < layers; ++l) CK(cudaMemcpy(w + (size_t)l * hidden, hg.data(), hidden * sizeof(float), cudaMemcpyHostToDevice));
  printf("[engine] weights uploaded (norm weights %d x %d)\n", layers, hidden);
  CK(cudaMemcpy(x, hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(res, 0, hw.size() * sizeof(float)));
  printf("[engine] request 1: prefill %d tokens\n", tokens);
  for (int l = 0; l < layers; ++l) {
    fused_add_rmsnorm<<<tokens, THREADS>>>(x, res, w + (size_t)l * hidden, hidden, 1e-5f);
    CK(cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(hw.data(), x, hw.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double s = 0; for (float v : hw) s += v;
  printf("[engine] request 1: prefill done, checksum %.4f\n", s);
  return 0;
}
