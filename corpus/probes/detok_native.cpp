// Native incremental detokenizer for detok_stream.py: a background thread turns sampled token ids into text pieces.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
namespace py = pybind11;

class Detokenizer {
 public:
  explicit Detokenizer(const std::string& vocab_file) {
    std::ifstream f(vocab_file);
    std::string line;
    while (std::getline(f, line)) vocab_.push_back(line);
    worker_ = std::thread([this] { run(); });
  }
  ~Detokenizer() {
    { std::lock_guard<std::mutex> g(mu_); stop_ = true; }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }
  size_t vocab_size() const { return vocab_.size(); }
  void submit(int seq, std::vector<int> ids) {
    { std::lock_guard<std::mutex> g(mu_); q_.push_back({seq, std::move(ids)}); }
    cv_.notify_one();
  }
  std::vector<std::string> texts() {
    std::lock_guard<std::mutex> g(mu_);
    return out_;
  }

 private:
  void run() {
    for (;;) {
      std::pair<int, std::vector<int>> item;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [this] { return stop_ || !q_.empty(); });
        if (stop_ && q_.empty()) return;
        item = std::move(q_.front());
        q_.pop_front();
      }
      std::string piece;
      for (int id : item.second) piece += vocab_.at(id);
      std::lock_guard<std::mutex> g(mu_);
      if ((int)out_.size() <= item.first) out_.resize(item.first + 1);
      out_[item.first] += piece;
    }
  }
  std::vector<std::string> vocab_;
  std::deque<std::pair<int, std::vector<int>>> q_;
  std::vector<std::string> out_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread worker_;
};

PYBIND11_MODULE(detok_native, m) {
  py::class_<Detokenizer>(m, "Detokenizer")
      .def(py::init<const std::string&>())
      .def("vocab_size", &Detokenizer::vocab_size)
      .def("submit", &Detokenizer::submit)
      .def("texts", &Detokenizer::texts);
}
