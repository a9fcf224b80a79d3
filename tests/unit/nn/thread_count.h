// LibTorch's intra-op thread count for a scope, for tests that run a kernel on one thread and on
// several.
#pragma once

#include <ATen/Parallel.h>

namespace mixseq::test {

class ThreadCount {
 public:
  explicit ThreadCount(int threads) : before_(at::get_num_threads()) { at::set_num_threads(threads); }
  ~ThreadCount() { at::set_num_threads(before_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int before_;
};

}  // namespace mixseq::test
