// ProcessGroup: the ranks of a data-parallel job joined by a torch c10d process group: Gloo
// for CPU tensors, NCCL for CUDA tensors (one GPU per local rank). Rendezvous goes through
// rank 0's c10d TCPStore at MASTER_ADDR:MASTER_PORT.
//
// A collective that fails (a peer exited: its sockets closed) or does not finish within the
// timeout (a peer hangs) throws mixseq::Error naming this rank and the operation, so a job
// whose rank died ends with a clear message instead of hanging.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/util/config.h"

#include "mixseq/distributed/launch_environment.h"

namespace mixseq {

struct ProcessGroupOptions {
  std::string backend = "auto";  // auto (nccl for CUDA, gloo for CPU) | gloo | nccl
  int64_t timeout = 900;         // seconds: rendezvous and each collective

  void visit(ConfigVisitor& v) {
    v.choice("backend", backend, {"auto", "gloo", "nccl"}, "collective backend");
    v.field("timeout", timeout, "seconds to wait for the other ranks before failing");
  }
};

// A collective in flight; wait() before reading its tensor.
class PendingCollective {
 public:
  struct State;
  explicit PendingCollective(std::shared_ptr<State> state);
  void wait();

 private:
  std::shared_ptr<State> state_;
};

class ProcessGroup {
 public:
  // Blocks until all env.world_size ranks have joined, or throws after the timeout. Sets SIGPIPE
  // to be ignored in this process, so that a write to a dead peer fails as an error, not a signal.
  ProcessGroup(const LaunchEnvironment& env, const c10::Device& device, const ProcessGroupOptions& options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int64_t rank() const { return rank_; }
  int64_t world_size() const { return world_size_; }
  const std::string& backend() const { return backend_; }

  // In place, over all ranks; `tensor` must be contiguous and on this rank's device.
  PendingCollective all_reduce_sum_async(at::Tensor tensor);
  void all_reduce_sum(at::Tensor tensor) { all_reduce_sum_async(std::move(tensor)).wait(); }
  void all_reduce_max(at::Tensor tensor);
  void broadcast(at::Tensor tensor, int64_t root);
  // Collectives this rank has started so far (for tests and benchmarks).
  int64_t collectives_started() const;
  // Sums of a few numbers over all ranks (token counts, loss sums), through this rank's device.
  std::vector<double> sum(const std::vector<double>& values);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int64_t rank_;
  int64_t world_size_;
  std::string backend_;
  c10::Device device_;
};

}  // namespace mixseq
