#include "mixseq/serve/latency_window.h"

#include <algorithm>
#include <cmath>

namespace mixseq {

void LatencyWindow::add(double milliseconds) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (samples_.size() < capacity_) {
    samples_.push_back(milliseconds);
    return;
  }
  samples_[next_] = milliseconds;
  next_ = (next_ + 1) % capacity_;
}

double LatencyWindow::percentile(double p) const {
  std::vector<double> sorted;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    sorted = samples_;
  }
  if (sorted.empty()) return 0;
  std::sort(sorted.begin(), sorted.end());
  // Nearest rank: the smallest sample with at least p% of the samples at or below it.
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace mixseq
