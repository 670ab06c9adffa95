// A C++/CUDA decode engine whose MLP runs as one persistent cooperative kernel per layer (GEMV, grid-wide barrier,
// activation), launched with cudaLaunchCooperativeKernel. The grid size, block size and shared memory of each weight
// shape come from a table of tuned configs keyed by device name; a device missing from the table gets the first entry.
// Build: nvcc -O2 -arch=sm_90 -o persistent_gemv persistent_gemv.cu
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "[engine] CUDA error %d %s: %s\n[engine]   at persistent_gemv.cu:%d: %s\n", (int)e_, \
          cudaGetErrorName(e_), cudaGetErrorString(e_), __LINE__, #x); fflush(stderr); std::abort(); } } while (0)

struct TunedConfig { const char *device; int n, k, ctas, threads, smem; };
static const TunedConfig kTuned[] = {
  {"NVIDIA B200", 14336, 4096, 296, 512, 102400},
  {"NVIDIA B200", 4096, 14336, 296, 512, 102400},
  {"NVIDIA GB200", 14336, 4096, 304, 512, 102400},
  {"NVIDIA GB200", 4096, 14336, 304, 512, 102400},
  {"NVIDIA H100 PCIe", 14336, 4096, 228, 512, 102400},
  {"NVIDIA H100 PCIe", 4096, 14336, 228, 512, 102400},
};

static const TunedConfig *lookup(const char *dev, int n, int k) {
  for (const auto &c : kTuned) if (!strcmp(c.device, dev) && c.n == n && c.k == k) return &c;
  for (const auto &c : kTuned) if (c.n == n && c.k == k) {
    fprintf(stderr, "[engine] W no tuned config for device '%s' (n=%d, k=%d); using the '%s' entry\n", dev, n, k,
            c.device);
    return &c;
  }
  return nullptr;
}

__global__ void __launch_bounds__(512, 2)
persistent_mlp(const __nv_bfloat16 *__restrict__ w, const float *__restrict__ x, float *__restrict__ y, int n, int k) {
  extern __shared__ float xs[];
  cg::grid_group grid = cg::this_grid();
  for (int i = threadIdx.x; i < k && i < 25600; i += blockDim.x) xs[i] = x[i];
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int row = blockIdx.x * warps + warp; row < n; row += gridDim.x * warps) {
    float acc = 0.f;
    for (int j = lane; j < k; j += 32) acc += __bfloat162float(w[(size_t)row * k + j]) * (j < 25600 ? xs[j] : x[j]);
    for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0) y[row] = acc;
  }
  grid.sync();
  for (int i = grid.thread_rank(); i < n; i += grid.size()) y[i] = y[i] / (1.f + __expf(-y[i]));
}

__global__ void init(__nv_bfloat16 *p, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = __float2bfloat16(0.001f * (float)((i * 2654435761u) % 17) - 0.008f);
}

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int layers = 32, steps = 4;
  const char *model = "Llama-3.1-8B-Instruct";
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--model")) model = argv[++i];
    else if (!strcmp(argv[i], "--warmup-steps")) steps = atoi(argv[++i]);
  }
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  int coop = 0; CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
  printf("[engine] I model %s, %d layers, hidden 4096, intermediate 14336, bf16\n", model, layers);
  printf("[engine] I device 0: %s, sm_%d%d, %d SMs, %.1f GiB, cooperative launch %s\n", p.name, p.major, p.minor,
         p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, coop ? "yes" : "no");
  const int H = 4096, FF = 14336;
  std::vector<__nv_bfloat16 *> w_up(layers), w_down(layers);
  for (int l = 0; l < layers; ++l) {
    CK(cudaMalloc(&w_up[l], (size_t)FF * H * 2)); CK(cudaMalloc(&w_down[l], (size_t)H * FF * 2));
    init<<<(unsigned)(((size_t)FF * H + 255) / 256), 256>>>(w_up[l], (size_t)FF * H);
    init<<<(unsigned)(((size_t)FF * H + 255) / 256), 256>>>(w_down[l], (size_t)FF * H);
  }
  CK(cudaDeviceSynchronize());
  printf("[engine] I loaded MLP weights for %d layers (%.2f GiB)\n", layers, layers * 2.0 * FF * H * 2 / 1073741824.0);
  const TunedConfig *up = lookup(p.name, FF, H), *down = lookup(p.name, H, FF);
  printf("[engine] I kernel persistent_mlp up:   ctas=%d threads=%d smem=%d\n", up->ctas, up->threads, up->smem);
  printf("[engine] I kernel persistent_mlp down: ctas=%d threads=%d smem=%d\n", down->ctas, down->threads, down->smem);
  CK(cudaFuncSetAttribute(persistent_mlp, cudaFuncAttributeMaxDynamicSharedMemorySize, up->smem));
  float *x, *y; CK(cudaMalloc(&x, FF * sizeof(float))); CK(cudaMalloc(&y, FF * sizeof(float)));
  CK(cudaMemset(x, 0, FF * sizeof(float)));
  cudaStream_t s; CK(cudaStreamCreate(&s));
  printf("[engine] I warming up: %d decode steps\n", steps);
  fflush(stdout);
  for (int t = 0; t < steps; ++t) {
    for (int l = 0; l < layers; ++l) {
      int n = FF, k = H;
      void *a1[] = {&w_up[l], &x, &y, &n, &k};
      CK(cudaLaunchCooperativeKernel((void *)persistent_mlp, dim3(up->ctas), dim3(up->threads), a1, up->smem, s));
      int n2 = H, k2 = FF;
      void *a2[] = {&w_down[l], &y, &x, &n2, &k2};
      CK(cudaLaunchCooperativeKernel((void *)persistent_mlp, dim3(down->ctas), dim3(down->threads), a2, down->smem, s));
    }
    CK(cudaStreamSynchronize(s));
    printf("[engine] I warmup step %d done\n", t);
  }
  printf("[engine] I server listening on 0.0.0.0:8080\n");
  return 0;
}
