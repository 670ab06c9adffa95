// Hopper warpgroup GEMM tile of an inference engine's kernel package (bf16 in, fp32 accumulate): one warpgroup issues a
// 64x64x16 wgmma per k-step from shared-memory descriptors. Built by wgmma_gemm_build.sh with CMake.
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__device__ __forceinline__ uint64_t make_smem_desc(const void *smem) {
  uint64_t addr = static_cast<uint64_t>(__cvta_generic_to_shared(smem));
  uint64_t desc = 0;
  desc |= (addr & 0x3FFFF) >> 4;            // start address
  desc |= (uint64_t)(16 >> 4) << 16;        // leading byte offset
  desc |= (uint64_t)(1024 >> 4) << 32;      // stride byte offset
  desc |= (uint64_t)1 << 62;                // 128B swizzle
  return desc;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], uint64_t da, uint64_t db, int scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(scale_d));
}

__global__ void __launch_bounds__(128) hgemm_wgmma_64x64(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C,
                                                         int M, int N, int K) {
  __shared__ alignas(1024) __nv_bfloat16 sA[64 * 16];
  __shared__ alignas(1024) __nv_bfloat16 sB[64 * 16];
  float acc[32] = {0.f};
  const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) {
      sA[i] = A[(size_t)(m0 + i / 16) * K + k0 + i % 16];
      sB[i] = B[(size_t)(n0 + i / 16) * K + k0 + i % 16];
    }
    __syncthreads();
    wgmma_fence();
    wgmma_m64n64k16(acc, make_smem_desc(sA), make_smem_desc(sB), k0 > 0);
    wgmma_commit();
    wgmma_wait0();
    __syncthreads();
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = 0; i < 16; ++i) {
    int row = m0 + warp * 16 + (lane / 4) + 8 * (i % 2);
    int col = n0 + (i / 2) * 8 + (lane % 4) * 2;
    if (row < M && col + 1 < N) { C[(size_t)row * N + col] = acc[2 * i]; C[(size_t)row * N + col + 1] = acc[2 * i + 1]; }
  }
}

extern "C" int hgemm_bf16(const void *A, const void *B, float *C, int M, int N, int K, cudaStream_t st) {
  dim3 grid((N + 63) / 64, (M + 63) / 64);
  hgemm_wgmma_64x64<<<grid, 128, 0, st>>>((const __nv_bfloat16 *)A, (const __nv_bfloat16 *)B, C, M, N, K);
  return (int)cudaGetLastError();
}
