// A C++/CUDA batch decode engine: requests become Sequence objects in a running list; every step runs one batched
// decode kernel for all running sequences, and a sequence that reaches its max_new_tokens is moved to the finished
// list and erased from the running list. A Sequence keeps its prompt token ids in a heap buffer it frees itself.
// Build: nvcc -O2 -arch=sm_90 -o batch_decode_engine batch_decode_engine.cu
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error: %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); std::exit(1); } } while (0)

static const int kPromptCap = 252;  // token ids per prompt buffer

struct Sequence {
  int id, prompt_len, max_new, n_gen = 0, slot;
  int *prompt_ids;
  Sequence(int id_, int len, int max_new_, int slot_)
      : id(id_), prompt_len(len), max_new(max_new_), slot(slot_), prompt_ids((int *)malloc(kPromptCap * sizeof(int))) {
    for (int i = 0; i < len && i < kPromptCap; ++i) prompt_ids[i] = (id_ * 7919 + i * 104729) % 128000;
  }
  ~Sequence() { free(prompt_ids); }
};

__global__ void decode_step(const float *__restrict__ w, const int *__restrict__ last, int *__restrict__ next,
                            int n, int vocab, int hidden) {
  int s = blockIdx.x;
  if (s >= n) return;
  __shared__ float best[256];
  __shared__ int arg[256];
  float b = -1e30f; int a = 0;
  for (int v = threadIdx.x; v < vocab; v += blockDim.x) {
    float acc = 0.f;
    for (int h = 0; h < hidden; h += 64) acc += w[(size_t)v * hidden + h] * (float)((last[s] + h) % 13);
    if (acc > b) { b = acc; a = v; }
  }
  best[threadIdx.x] = b; arg[threadIdx.x] = a;
  __syncthreads();
  for (int o = blockDim.x / 2; o; o >>= 1) {
    if (threadIdx.x < o && best[threadIdx.x + o] > best[threadIdx.x]) {
      best[threadIdx.x] = best[threadIdx.x + o]; arg[threadIdx.x] = arg[threadIdx.x + o];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) next[s] = arg[0];
}

__global__ void init_w(float *w, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) w[i] = (float)((i * 2654435761u) % 1000) / 1000.f - 0.5f;
}

int main(int argc, char **argv) {
  const char *model = "tinyllama-1.1b-chat";
  for (int i = 1; i + 1 < argc; ++i) if (!strcmp(argv[i], "--model")) model = argv[++i];
  const int vocab = 32000, hidden = 2048, max_batch = 8;
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("engine: model=%s vocab=%d hidden=%d max_batch=%d device=%s\n", model, vocab, hidden, max_batch, p.name);
  float *w; CK(cudaMalloc(&w, (size_t)vocab * hidden * sizeof(float)));
  init_w<<<(unsigned)(((size_t)vocab * hidden + 255) / 256), 256>>>(w, (size_t)vocab * hidden);
  int *d_last, *d_next; CK(cudaMalloc(&d_last, max_batch * sizeof(int))); CK(cudaMalloc(&d_next, max_batch * sizeof(int)));
  CK(cudaDeviceSynchronize());
  printf("engine: weights ready (%.1f MiB)\n", (double)vocab * hidden * 4 / 1048576.0);

  std::vector<Sequence> running, finished;
  running.reserve(max_batch);
  finished.reserve(64);
  const int prompts[4] = {37, 112, 64, 201}, max_new[4] = {32, 12, 40, 24};
  for (int r = 0; r < 4; ++r) {
    running.emplace_back(r, prompts[r], max_new[r], r);
    printf("engine: added request %d (prompt_tokens=%d, max_new_tokens=%d)\n", r, prompts[r], max_new[r]);
  }
  std::vector<int> last(max_batch), next(max_batch);
  for (auto &s : running) last[s.slot] = s.prompt_ids[s.prompt_len - 1];
  int step = 0;
  while (!running.empty()) {
    int n = 0;
    for (auto &s : running) last[n++] = last[s.slot], s.slot = n - 1;
    CK(cudaMemcpy(d_last, last.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    decode_step<<<n, 256>>>(w, d_last, d_next, n, vocab, hidden);
    CK(cudaMemcpy(next.data(), d_next, n * sizeof(int), cudaMemcpyDeviceToHost));
    ++step;
    for (auto &s : running) { last[s.slot] = next[s.slot]; ++s.n_gen; }
    if (step % 8 == 0) printf("engine: step %d, running=%zu, finished=%zu\n", step, running.size(), finished.size());
    for (auto it = running.begin(); it != running.end();) {
      if (it->n_gen >= it->max_new) {
        printf("engine: request %d finished (prompt_tokens=%d, completion_tokens=%d, finish_reason=length)\n", it->id,
               it->prompt_len, it->n_gen);
        fflush(stdout);
        finished.push_back(*it);
        it = running.erase(it);
      } else {
        ++it;
      }
    }
  }
  printf("engine: all %zu requests done in %d steps\n", finished.size(), step);
  return 0;
}
