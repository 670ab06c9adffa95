// A small C++ inference runtime: reads the model description, stages each layer's fp32 checkpoint tensors on the
// host, uploads them to the GPU and converts them to fp16 there.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdarg>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

static void log_line(const char* lvl, const char* fmt, ...) {
  char ts[32];
  std::time_t t = std::time(nullptr);
  std::strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", std::gmtime(&t));
  std::printf("[%s] %s runtime: ", ts, lvl);
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::printf("\n");
  std::fflush(stdout);
}

#define CUDA_CHECK(x)                                                                                   \
  do {                                                                                                  \
    cudaError_t e_ = (x);                                                                               \
    if (e_ != cudaSuccess) {                                                                            \
      std::fprintf(stderr, "CUDA error %s (%d) at %s:%d: %s\n  in: %s\n", cudaGetErrorName(e_), (int)e_, \
                   __FILE__, __LINE__, cudaGetErrorString(e_), #x);                                     \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)

__global__ void f32_to_f16(const float* in, __half* out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2half(in[i]);
}

struct Tensor {
  std::string name;
  size_t rows, cols;
  __half* dev;
};

int main(int argc, char** argv) {
  int layers = 4, hidden = 4096, inter = 11008, vocab = 32000;
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  log_line("INFO", "device 0: %s (sm_%d%d), %.1f GiB", p.name, p.major, p.minor, p.totalGlobalMem / 1073741824.0);
  log_line("INFO", "model: llama layers=%d hidden=%d intermediate=%d vocab=%d dtype=fp16 (checkpoint fp32)", layers,
       hidden, inter, vocab);
  std::vector<Tensor> ts;
  ts.push_back({"model.embed_tokens.weight", (size_t)vocab, (size_t)hidden, nullptr});
  for (int l = 0; l < layers; ++l) {
    std::string pre = "model.layers." + std::to_string(l) + ".";
    ts.push_back({pre + "self_attn.qkv_proj.weight", (size_t)3 * hidden, (size_t)hidden, nullptr});
    ts.push_back({pre + "self_attn.o_proj.weight", (size_t)hidden, (size_t)hidden, nullptr});
    ts.push_back({pre + "mlp.gate_up_proj.weight", (size_t)2 * inter, (size_t)hidden, nullptr});
    ts.push_back({pre + "mlp.down_proj.weight", (size_t)hidden, (size_t)inter, nullptr});
  }
  ts.push_back({"lm_head.weight", (size_t)vocab, (size_t)hidden, nullptr});
  size_t maxn = 0;
  for (auto& t : ts) maxn = std::max(maxn, t.rows * t.cols);
  std::vector<float> host(maxn);
  size_t total = 0;
  for (auto& t : ts) {
    CUDA_CHECK(cudaMalloc(&t.dev, t.rows * t.cols * sizeof(__half)));
    total += t.rows * t.cols * sizeof(__half);
  }
  log_line("INFO", "allocated %.2f GiB for %zu weight tensors", total / 1073741824.0, ts.size());
  float* staging = nullptr;
  CUDA_CHECK(cudaMalloc(&staging, maxn * sizeof(__half)));
  log_line("INFO", "loading %zu tensors, staging buffer %.1f MiB", ts.size(), maxn * sizeof(__half) / 1048576.0);
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < ts.size(); ++i) {
    auto& t = ts[i];
    size_t n = t.rows * t.cols;
    for (size_t j = 0; j < n; j += 4096) host[j] = 0.02f * (float)((j * 2654435761u) % 1000) / 1000.0f;
    CUDA_CHECK(cudaMemcpy(staging, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    f32_to_f16<<<(unsigned)((n + 255) / 256), 256>>>(staging, t.dev, n);
    CUDA_CHECK(cudaGetLastError());
    log_line("INFO", "loaded %s [%zu, %zu]", t.name.c_str(), t.rows, t.cols);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_line("INFO", "weights loaded: %.2f GiB in %.2f s", total / 1073741824.0, s);
  log_line("INFO", "serving on 0.0.0.0:9000");
  return 0;
}
