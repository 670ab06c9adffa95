// A C++/CUDA batch server: a scheduler thread pulls requests from a queue and runs decode steps on the GPU; the main
// thread feeds requests from a file and, in --max-requests mode, returns from main once that many have completed.
// Shutdown on SIGINT/SIGTERM goes through Server::shutdown() (stop flag, notify, join).
// Build: nvcc -O2 -arch=sm_90 -o batch_server_drain batch_server_drain.cu -lpthread
#include <cuda_runtime.h>
#include <atomic>
#include <cstdarg>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

static void log_line(const char *lvl, const char *fmt, ...) {
  using namespace std::chrono;
  static const auto t0 = steady_clock::now();
  double t = duration<double>(steady_clock::now() - t0).count();
  char buf[512]; va_list ap; va_start(ap, fmt); vsnprintf(buf, sizeof buf, fmt, ap); va_end(ap);
  fprintf(stdout, "[%9.3f] %s %s\n", t, lvl, buf); fflush(stdout);
}

__global__ void decode_step(float *logits, const int *tokens, int n, int vocab, int step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n * vocab) logits[i] = (float)((tokens[i / vocab] * 31 + (i % vocab) * 17 + step) % 997) * 1e-3f;
}

struct Request { int id; int prompt_len; int max_new; int generated = 0; };

class Server {
 public:
  explicit Server(int max_batch) : max_batch_(max_batch) {
    CK(cudaStreamCreate(&stream_));
    CK(cudaMalloc(&logits_, sizeof(float) * max_batch_ * kVocab));
    CK(cudaMalloc(&tokens_, sizeof(int) * max_batch_));
    CK(cudaMemset(tokens_, 0, sizeof(int) * max_batch_));
    sched_ = std::thread([this] { loop(); });
    log_line("INFO", "scheduler thread started (max_batch=%d)", max_batch_);
  }
  void submit(Request r) {
    { std::lock_guard<std::mutex> g(mu_); queue_.push_back(r); }
    cv_.notify_one();
  }
  int completed() const { return completed_.load(); }
  void shutdown() {
    running_ = false; cv_.notify_all();
    if (sched_.joinable()) sched_.join();
    log_line("INFO", "scheduler stopped");
  }
  ~Server() {
    cudaFree(logits_); cudaFree(tokens_); cudaStreamDestroy(stream_);
    log_line("INFO", "released GPU buffers");
  }

 private:
  static constexpr int kVocab = 32000;
  void loop() {
    std::vector<Request> running;
    int step = 0;
    while (running_) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait_for(lk, std::chrono::milliseconds(20), [&] { return !queue_.empty() || !running_; });
        while (!queue_.empty() && (int)running.size() < max_batch_) {
          running.push_back(queue_.front()); queue_.pop_front();
          log_line("INFO", "req %d: admitted (prompt %d tokens, max_new_tokens %d), batch=%zu", running.back().id,
               running.back().prompt_len, running.back().max_new, running.size());
        }
      }
      if (running.empty()) continue;
      int n = (int)running.size();
      decode_step<<<(n * kVocab + 255) / 256, 256, 0, stream_>>>(logits_, tokens_, n, kVocab, step++);
      CK(cudaStreamSynchronize(stream_));
      for (auto &r : running) r.generated++;
      for (size_t i = 0; i < running.size();) {
        if (running[i].generated >= running[i].max_new) {
          log_line("INFO", "req %d: finished (%d tokens)", running[i].id, running[i].generated);
          running.erase(running.begin() + i); completed_++;
        } else {
          ++i;
        }
      }
    }
  }
  int max_batch_;
  cudaStream_t stream_{};
  float *logits_ = nullptr;
  int *tokens_ = nullptr;
  std::thread sched_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> queue_;
  std::atomic<bool> running_{true};
  std::atomic<int> completed_{0};
};

static Server *g_server = nullptr;
static void on_signal(int) { if (g_server) g_server->shutdown(); std::_Exit(0); }

int main(int argc, char **argv) {
  int max_requests = 12, max_batch = 8;
  const char *model = "Mistral-7B-Instruct-v0.3";
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--max-requests")) max_requests = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--max-batch")) max_batch = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--model")) model = argv[++i];
  }
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  log_line("INFO", "batch_server 0.9.2 (model %s)", model);
  log_line("INFO", "device 0: %s (sm_%d%d, %.0f GiB)", p.name, p.major, p.minor, p.totalGlobalMem / 1073741824.0);
  log_line("INFO", "mode: offline batch, --max-requests %d, --max-batch %d", max_requests, max_batch);
  Server server(max_batch);
  g_server = &server;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  for (int i = 0; i < max_requests; ++i) server.submit({i, 64 + 13 * i, 24 + (i * 7) % 40});
  while (server.completed() < max_requests) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  log_line("INFO", "all %d requests completed; writing results to results.jsonl", max_requests);
  log_line("INFO", "exiting");
  return 0;
}
