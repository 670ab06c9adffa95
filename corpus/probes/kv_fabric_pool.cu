// The KV-cache pool of a disaggregated prefill/decode server (C++/CUDA): the prefill worker allocates its KV pages with
// the CUDA virtual memory management API and exportable fabric handles, so decode workers can import the pages and
// pull them over NVLink. Driver API entry points are taken from libcuda at run time.
// Build: nvcc -O2 -arch=sm_90 -o kv_fabric_pool kv_fabric_pool.cu -ldl
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static void *libcuda;
template <class F> static F sym(const char *name) {
  void *p = dlsym(libcuda, name);
  if (!p) { fprintf(stderr, "[kv_pool] E missing driver symbol %s\n", name); std::exit(2); }
  return (F)p;
}

static decltype(&cuGetErrorName) pGetErrorName;
static decltype(&cuGetErrorString) pGetErrorString;

#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *n_ = "?", *s_ = "?"; \
  pGetErrorName(r_, &n_); pGetErrorString(r_, &s_); \
  fprintf(stderr, "[kv_pool] E CUDA driver error %d (%s): %s\n[kv_pool] E   in %s at kv_fabric_pool.cu:%d\n", (int)r_, \
          n_, s_, #x, __LINE__); \
  fprintf(stderr, "[server] E failed to initialize the KV cache pool; exiting\n"); std::exit(1); } } while (0)

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  double pool_gib = 24.0;
  int page_tokens = 64;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--kv-pool-gib")) pool_gib = atof(argv[++i]);
    else if (!strcmp(argv[i], "--page-tokens")) page_tokens = atoi(argv[++i]);
  }
  libcuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (!libcuda) { fprintf(stderr, "[kv_pool] E dlopen libcuda.so.1: %s\n", dlerror()); return 2; }
  pGetErrorName = sym<decltype(&cuGetErrorName)>("cuGetErrorName");
  pGetErrorString = sym<decltype(&cuGetErrorString)>("cuGetErrorString");
  auto pDeviceGetAttribute = sym<decltype(&cuDeviceGetAttribute)>("cuDeviceGetAttribute");
  auto pGranularity = sym<decltype(&cuMemGetAllocationGranularity)>("cuMemGetAllocationGranularity");
  auto pMemCreate = sym<decltype(&cuMemCreate)>("cuMemCreate");
  auto pExport = sym<decltype(&cuMemExportToShareableHandle)>("cuMemExportToShareableHandle");
  auto pAddressReserve = sym<decltype(&cuMemAddressReserve)>("cuMemAddressReserve");
  auto pMemMap = sym<decltype(&cuMemMap)>("cuMemMap");
  auto pSetAccess = sym<decltype(&cuMemSetAccess)>("cuMemSetAccess");

  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess || cudaFree(0) != cudaSuccess) {
    fprintf(stderr, "[kv_pool] E no CUDA device\n");
    return 2;
  }
  int drv = 0; cudaDriverGetVersion(&drv);
  printf("[server] I role=prefill, model=Llama-3.3-70B-Instruct (tp=1 shard 0/1), kv transfer backend=nvlink-fabric\n");
  printf("[server] I device 0: %s (sm_%d%d, %.1f GiB), driver API %d.%d\n", p.name, p.major, p.minor,
         p.totalGlobalMem / 1073741824.0, drv / 1000, (drv % 1000) / 10);
  int vmm = 0;
  CU(pDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
  printf("[kv_pool] I virtual memory management supported: %d\n", vmm);

  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof(prop));
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  size_t gran = 0;
  CU(pGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  const size_t page_bytes = (size_t)page_tokens * 80 * 2 * 8 * 128 * 2;  // 80 layers, K+V, 8 kv heads, 128, bf16
  const size_t chunk = ((size_t)(2.0 * 1073741824.0) + gran - 1) / gran * gran;
  const int n_chunks = (int)(pool_gib / 2.0 + 0.5);
  printf("[kv_pool] I pool %.1f GiB = %d chunks x %zu MiB, granularity %zu KiB, page %d tokens (%.2f MiB), %zu pages\n",
         pool_gib, n_chunks, chunk >> 20, gran >> 10, page_tokens, page_bytes / 1048576.0,
         (size_t)n_chunks * chunk / page_bytes);
  CUdeviceptr base = 0;
  CU(pAddressReserve(&base, (size_t)n_chunks * chunk, gran, 0, 0));
  for (int c = 0; c < n_chunks; ++c) {
    CUmemGenericAllocationHandle h;
    CU(pMemCreate(&h, chunk, &prop, 0));
    CUmemFabricHandle fh;
    CU(pExport(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    CU(pMemMap(base + (size_t)c * chunk, chunk, 0, h, 0));
    if (c % 4 == 3) printf("[kv_pool] I mapped and exported %d/%d chunks\n", c + 1, n_chunks);
  }
  CUmemAccessDesc acc;
  memset(&acc, 0, sizeof(acc));
  acc.location = prop.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU(pSetAccess(base, (size_t)n_chunks * chunk, &acc, 1));
  printf("[kv_pool] I KV pool ready at 0x%llx; publishing fabric handles to the decode workers\n",
         (unsigned long long)base);
  printf("[server] I prefill worker ready on 0.0.0.0:8200\n");
  return 0;
}
