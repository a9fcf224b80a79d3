// LatencyWindow: the latencies of the last `capacity` requests, for a server's percentiles. A
// window, not all requests since start, so /metrics tells how the server does now.
// Thread-safe: add() and percentile() may be called from any thread.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

namespace mixseq {

class LatencyWindow {
 public:
  explicit LatencyWindow(size_t capacity = 1024) : capacity_(capacity) { samples_.reserve(capacity); }

  void add(double milliseconds);
  // The p-th percentile (p in [0, 100]) by the nearest-rank method; 0 when the window is empty.
  double percentile(double p) const;

 private:
  size_t capacity_;
  size_t next_ = 0;  // where the next sample goes once the window is full
  mutable std::mutex mutex_;
  std::vector<double> samples_;
};

}  // namespace mixseq
