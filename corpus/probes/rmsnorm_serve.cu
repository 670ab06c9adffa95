// A small CUDA C++ inference step (embedding lookup, RMSNorm, greedy argmax), built for one GPU architecture only.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <sys/time.h>
#include <cuda_runtime.h>

static void logf(const char* level, const char* msg) {
  timeval tv; gettimeofday(&tv, nullptr);
  char buf[32]; strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", localtime(&tv.tv_sec));
  printf("%s,%03ld %s rmsnorm_serve: %s\n", buf, (long)(tv.tv_usec / 1000), level, msg);
}

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\": %s\n", __FILE__, __LINE__, (int)e_, cudaGetErrorName(e_), #call, cudaGetErrorString(e_)); \
  exit(1); } } while (0)

__global__ void embed_rmsnorm(const int* ids, const float* emb, const float* w, float* out, int d, float eps) {
  int t = blockIdx.x;
  const float* row = emb + (size_t)ids[t] * d;
  __shared__ float ss[256];
  float acc = 0.f;
  for (int i = threadIdx.x; i < d; i += blockDim.x) acc += row[i] * row[i];
  ss[threadIdx.x] = acc; __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) ss[threadIdx.x] += ss[threadIdx.x + s]; __syncthreads(); }
  float r = rsqrtf(ss[0] / d + eps);
  for (int i = threadIdx.x; i < d; i += blockDim.x) out[(size_t)t * d + i] = row[i] * r * w[i];
}

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  char msg[256];
  int dev = 0; cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  int rt = 0, drv = 0; cudaRuntimeGetVersion(&rt); cudaDriverGetVersion(&drv);
  snprintf(msg, sizeof msg, "device %d: %s, compute capability %d.%d, runtime %d, driver %d", dev, prop.name, prop.major, prop.minor, rt, drv);
  logf("INFO", msg);
  const int vocab = 32000, d = 2048, T = 128;
  snprintf(msg, sizeof msg, "loading weights: embedding %dx%d, norm %d (fp32)", vocab, d, d); logf("INFO", msg);
  std::vector<float> h_emb((size_t)vocab * d), h_w(d, 1.0f);
  for (size_t i = 0; i < h_emb.size(); ++i) h_emb[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  float *emb, *w, *out; int* ids;
  CHECK(cudaMalloc(&emb, h_emb.size() * sizeof(float)));
  CHECK(cudaMalloc(&w, d * sizeof(float)));
  CHECK(cudaMalloc(&out, (size_t)T * d * sizeof(float)));
  CHECK(cudaMalloc(&ids, T * sizeof(int)));
  CHECK(cudaMemcpy(emb, h_emb.data(), h_emb.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(w, h_w.data(), d * sizeof(float), cudaMemcpyHostToDevice));
  logf("INFO", "weights loaded");
  std::vector<int> h_ids(T); for (int i = 0; i < T; ++i) h_ids[i] = (i * 37 + 11) % vocab;
  CHECK(cudaMemcpy(ids, h_ids.data(), T * sizeof(int), cudaMemcpyHostToDevice));
  snprintf(msg, sizeof msg, "request 0: prefill %d tokens", T); logf("INFO", msg);
  embed_rmsnorm<<<T, 256>>>(ids, emb, w, out, d, 1e-6f);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  logf("INFO", "prefill done");
  return 0;
}
