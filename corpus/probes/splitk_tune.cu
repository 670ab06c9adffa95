// Split-K GEMM autotuner: seeds its search with a roofline estimate from the device's clocks.
#include <cstdio>
#include <cuda_runtime.h>

struct Roofline { double tflops_bf16, hbm_gbps; };

extern "C" Roofline splitk_roofline(int dev) {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, dev);
  // 4th-gen tensor cores: 1024 dense bf16 FMA / clk / SM
  double sm_ghz = prop.clockRate * 1e-6;
  double mem_ghz = prop.memoryClockRate * 1e-6;
  Roofline r;
  r.tflops_bf16 = 2.0 * 1024 * prop.multiProcessorCount * sm_ghz / 1e3;
  r.hbm_gbps = 2.0 * mem_ghz * (prop.memoryBusWidth / 8);
  return r;
}

template <int BM, int BN, int BK, int SPLITS>
__global__ void splitk_gemm(const float *a, const float *b, float *c, int m, int n, int k) {
  int row = blockIdx.y * BM + threadIdx.y, col = blockIdx.x * BN + threadIdx.x, s = blockIdx.z;
  if (row >= m || col >= n) return;
  int k0 = s * (k / SPLITS), k1 = (s + 1) * (k / SPLITS);
  float acc = 0.f;
  for (int i = k0; i < k1; ++i) acc += a[row * k + i] * b[i * n + col];
  atomicAdd(&c[row * n + col], acc);
}

extern "C" int splitk_pick(int m, int n, int k) {
  Roofline r = splitk_roofline(0);
  double intensity = 2.0 * m * n * k / (4.0 * (m * k + k * n + m * n));
  return intensity * r.hbm_gbps < r.tflops_bf16 * 1e3 ? 8 : 1;
}

template __global__ void splitk_gemm<16, 16, 32, 8>(const float *, const float *, float *, int, int, int);
