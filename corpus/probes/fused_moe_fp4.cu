// Stand-in for the wheel's prebuilt fused MoE FP4 GEMM (built for Blackwell only: sm_100a, sm_120a).
#include <cuda_fp16.h>
extern "C" __global__ void fused_moe_fp4_gemm(half *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = __hadd(x[i], __float2half(1.0f));
}
