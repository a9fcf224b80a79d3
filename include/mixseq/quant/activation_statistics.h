// ActivationStatistics: what calibration records of one activation (a quantized layer's input
// or output) over the batches it saw, and the range each clipping mode makes of it:
//
//   none        [min, max] over all batches
//   avg         [mean of per-batch min, mean of per-batch max]: Distiller's "avg" clipping, which
//               ignores the rare batch whose outliers would stretch the grid for every other one
//   percentile  [mean of per-batch (100 - p)-th percentile, mean of per-batch p-th percentile]
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>

namespace mixseq {

class ActivationStatistics {
 public:
  // p, in (50, 100]; 0: no percentiles recorded, and range("percentile") is an error (each
  // batch's percentiles cost two selections over it, most of a calibration's time).
  explicit ActivationStatistics(double percentile = 99.99);

  void add(const torch::Tensor& batch);  // any shape; every element counts, padding included

  int64_t batches() const { return batches_; }
  double min() const { return min_; }
  double max() const { return max_; }
  double average_min() const { return batch_min_sum_ / static_cast<double>(batches_); }
  double average_max() const { return batch_max_sum_ / static_cast<double>(batches_); }
  double average_low_percentile() const { return batch_low_sum_ / static_cast<double>(batches_); }
  double average_high_percentile() const { return batch_high_sum_ / static_cast<double>(batches_); }

  // [lo, hi] for clip "none", "avg" or "percentile"; throws mixseq::Error before any batch.
  std::pair<double, double> range(const std::string& clip) const;

 private:
  double percentile_;
  int64_t batches_ = 0;
  double min_, max_;
  double batch_min_sum_ = 0, batch_max_sum_ = 0, batch_low_sum_ = 0, batch_high_sum_ = 0;
};

}  // namespace mixseq
