// A C++/CUDA disaggregated server on one GPU: the prefill worker owns the KV-cache pool and hands it to the decode
// worker (a second process) through CUDA IPC (cudaIpcGetMemHandle / cudaIpcOpenMemHandle), so decode reads the
// prefilled KV pages in place. Since v0.7 the pool is allocated with the stream-ordered allocator
// (--kv-allocator async, the default) to overlap the 60 GiB allocation with weight loading.
// Build: nvcc -O2 -arch=sm_90 -o kv_ipc_export kv_ipc_export.cu
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <ctime>

static const char *g_role = "prefill";
static void log_line(const char *lvl, const char *fmt, ...) {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t tt = system_clock::to_time_t(now);
  char ts[32]; std::strftime(ts, sizeof ts, "%H:%M:%S", std::localtime(&tt));
  char buf[600]; va_list ap; va_start(ap, fmt); vsnprintf(buf, sizeof buf, fmt, ap); va_end(ap);
  fprintf(stdout, "%s %s [%s worker pid=%d] %s\n", ts, lvl, g_role, (int)getpid(), buf); fflush(stdout);
}
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  log_line("ERROR", "CUDA call failed: %s -> %s: %s (kv_ipc_export.cu:%d)", #x, cudaGetErrorName(e_), \
           cudaGetErrorString(e_), __LINE__); exit(3); } } while (0)

static std::string hex(const void *p, size_t n) {
  static const char *d = "0123456789abcdef"; std::string s;
  for (size_t i = 0; i < n; ++i) { unsigned char c = ((const unsigned char *)p)[i]; s += d[c >> 4]; s += d[c & 15]; }
  return s;
}
static void unhex(const char *s, void *p, size_t n) {
  for (size_t i = 0; i < n; ++i) { unsigned v; sscanf(s + 2 * i, "%2x", &v); ((unsigned char *)p)[i] = (unsigned char)v; }
}

__global__ void fill_pages(unsigned short *kv, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) kv[i] = (unsigned short)(i * 2654435761u >> 16);
}

static int decode_worker(const char *handle_hex, size_t bytes) {
  g_role = "decode";
  cudaIpcMemHandle_t h; unhex(handle_hex, &h, sizeof h);
  CK(cudaSetDevice(0));
  void *kv = nullptr;
  CK(cudaIpcOpenMemHandle(&kv, h, cudaIpcMemLazyEnablePeerAccess));
  log_line("INFO", "mapped KV pool from prefill worker: %p (%.2f GiB)", kv, bytes / 1073741824.0);
  CK(cudaIpcCloseMemHandle(kv));
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 4 && !strcmp(argv[1], "--decode-worker")) return decode_worker(argv[2], strtoull(argv[3], nullptr, 10));
  const char *model = "Llama-3.1-8B-Instruct", *alloc = "async";
  double kv_gib = 24.0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--model")) model = argv[++i];
    else if (!strcmp(argv[i], "--kv-cache-gib")) kv_gib = atof(argv[++i]);
    else if (!strcmp(argv[i], "--kv-allocator")) alloc = argv[++i];
  }
  log_line("INFO", "disagg-serve 0.7.1: model=%s, prefill and decode workers on GPU 0, kv transfer=cuda_ipc", model);
  CK(cudaSetDevice(0));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  int pools = 0; CK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0));
  log_line("INFO", "device 0: %s, sm_%d%d, %.1f GiB, memory pools supported: %d", p.name, p.major, p.minor,
           p.totalGlobalMem / 1073741824.0, pools);
  const size_t layers = 32, kv_heads = 8, head_dim = 128, page = 16;
  const size_t bytes = (size_t)(kv_gib * 1073741824.0);
  const size_t per_page = layers * 2 * kv_heads * head_dim * page * 2;
  log_line("INFO", "KV pool: %.1f GiB, %zu pages of %zu tokens (%zu KiB/page), allocator=%s", kv_gib, bytes / per_page,
           page, per_page / 1024, alloc);
  cudaStream_t s; CK(cudaStreamCreate(&s));
  void *kv = nullptr;
  if (!strcmp(alloc, "async")) {
    CK(cudaMallocAsync(&kv, bytes, s));
  } else {
    CK(cudaMalloc(&kv, bytes));
  }
  log_line("INFO", "loading weights (16.1 GiB) while the KV pool is allocated ...");
  void *w; CK(cudaMalloc(&w, (size_t)16 * 1073741824ull));
  CK(cudaMemsetAsync(w, 0, (size_t)16 * 1073741824ull, s));
  fill_pages<<<(unsigned)((bytes / 2 + 255) / 256), 256, 0, s>>>((unsigned short *)kv, bytes / 2);
  CK(cudaStreamSynchronize(s));
  log_line("INFO", "weights loaded, KV pool ready at %p", kv);
  log_line("INFO", "exporting KV pool to the decode worker (cudaIpcGetMemHandle)");
  cudaIpcMemHandle_t h;
  CK(cudaIpcGetMemHandle(&h, kv));
  std::string hh = hex(&h, sizeof h), sz = std::to_string(bytes);
  log_line("INFO", "KV pool handle %s...; starting decode worker", hh.substr(0, 16).c_str());
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "--decode-worker", hh.c_str(), sz.c_str(), (char *)nullptr);
    _exit(127);
  }
  int st = 0; waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    log_line("ERROR", "decode worker exited with status %d; shutting down", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 1;
  }
  log_line("INFO", "decode worker attached; serving on 0.0.0.0:8000");
  return 0;
}
