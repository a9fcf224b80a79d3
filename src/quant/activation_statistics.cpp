#include "mixseq/quant/activation_statistics.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "mixseq/util/error.h"

namespace mixseq {

ActivationStatistics::ActivationStatistics(double percentile)
    : percentile_(percentile),
      min_(std::numeric_limits<double>::infinity()),
      max_(-std::numeric_limits<double>::infinity()) {
  MIXSEQ_CHECK(percentile == 0 || (percentile > 50 && percentile <= 100), "percentile must be in (50, 100] (or 0: ",
               "none), got ", percentile);
}

void ActivationStatistics::add(const torch::Tensor& batch) {
  const auto x = batch.detach().to(at::kCPU, at::kFloat).reshape({-1});  // [n]
  const int64_t n = x.numel();
  if (n == 0) return;
  const double lo = x.min().item<double>(), hi = x.max().item<double>();
  ++batches_;
  min_ = std::min(min_, lo);
  max_ = std::max(max_, hi);
  batch_min_sum_ += lo;
  batch_max_sum_ += hi;
  if (percentile_ == 0) return;
  // The k-th smallest with k = ceil(p/100 n) (the nearest-rank percentile), and its mirror.
  const auto k = std::min<int64_t>(n, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(percentile_ / 100 * n))));
  batch_high_sum_ += std::get<0>(at::kthvalue(x, k)).item<double>();
  batch_low_sum_ += std::get<0>(at::kthvalue(x, n - k + 1)).item<double>();
}

std::pair<double, double> ActivationStatistics::range(const std::string& clip) const {
  MIXSEQ_CHECK(batches_ > 0, "no calibration batch reached this activation");
  if (clip == "none") return {min_, max_};
  if (clip == "avg") return {average_min(), average_max()};
  MIXSEQ_CHECK(clip == "percentile", "unknown clip mode '", clip, "'; known: none, avg, percentile");
  MIXSEQ_CHECK(percentile_ != 0, "clip percentile: this activation was calibrated without percentiles");
  return {average_low_percentile(), average_high_percentile()};
}

}  // namespace mixseq
