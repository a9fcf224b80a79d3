// GradientReducer: sums the gradients of all ranks while backward still runs, as PyTorch's
// DistributedDataParallel does.
//
// Parameters are grouped into buckets of about bucket_cap_mb, in reverse registration order
// (roughly the order backward produces their gradients). A hook on each parameter's gradient
// accumulator counts it ready; when a bucket's last gradient is ready, its gradients are
// copied into one flat buffer and its all-reduce starts asynchronously, while autograd goes on
// with the earlier layers. finish() starts what is left (parameters that got no gradient count
// as zero), waits, and copies the sums back into the .grad tensors.
//
// The reduction is a sum: the training loss is normalised by the target tokens of the whole
// update over all ranks before backward, so the summed gradient is the gradient of the global
// per-token loss, and N ranks with batch B make the same update as 1 rank with batch N*B.
// With gradient accumulation only the last micro-batch's backward is armed (arm()); earlier
// ones accumulate locally.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "mixseq/util/config.h"

#include "mixseq/distributed/process_group.h"

namespace mixseq {

struct GradientReducerOptions {
  double bucket_cap_mb = 25;  // bucket size, as DistributedDataParallel's bucket_cap_mb
  bool overlap = true;        // false: all buckets start in finish(), after backward (for comparison)

  void visit(ConfigVisitor& v) {
    v.field("bucket_cap_mb", bucket_cap_mb, "gradient bucket size in MB");
    v.field("overlap", overlap, "all-reduce gradient buckets while backward runs");
  }
};

// What the last reduction did, for tests and benchmarks.
struct ReductionStats {
  int64_t buckets = 0;
  int64_t started_during_backward = 0;  // buckets whose all-reduce started from a gradient hook
  int64_t gradients_pending_at_first_start = 0;  // gradients not yet computed when the first bucket started
  int64_t bytes = 0;                    // gradient bytes all-reduced by this rank
  double wait_ms = 0;                   // time finish() waited for the all-reduces
};

class GradientReducer {
 public:
  // `parameters` must all be dense, on one device, with one dtype; they are broadcast from
  // rank 0 first, so all ranks start from identical weights.
  GradientReducer(std::vector<at::Tensor> parameters, ProcessGroup& group, const GradientReducerOptions& options);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Call right before the backward whose gradients complete the update.
  void arm();
  // Call after that backward: on return every rank's .grad holds the sum over ranks.
  void finish();

  int64_t bucket_count() const;
  const ReductionStats& last_stats() const { return stats_; }

 private:
  struct Bucket;
  void gradient_ready(size_t parameter);
  void start(Bucket& bucket, bool from_hook);

  std::vector<at::Tensor> parameters_;
  ProcessGroup& group_;
  GradientReducerOptions options_;
  std::vector<std::unique_ptr<Bucket>> buckets_;
  std::vector<size_t> bucket_of_;          // parameter index -> bucket index
  std::vector<std::shared_ptr<void>> accumulators_;  // keep the hooked autograd nodes alive
  bool armed_ = false;
  int64_t pending_gradients_ = 0;
  ReductionStats stats_;
};

}  // namespace mixseq
