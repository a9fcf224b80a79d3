// What the benchmark programs (bench_command, bench_speech, bench_synthesis) time with: the warm-up
// left out, a device's queued work finished before a clock is read, LibTorch's profiler over the
// timed part where asked for, and the record printed as one JSON line.
#pragma once

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "mixseq/util/memory_usage.h"
#include "operator_profile.h"

namespace mixseq::cli {

// Returns when the work queued on `device` is done: CUDA kernels run after their calls return, so a
// clock read without this would time the queueing. Nothing to wait for on the CPU.
void wait_for_device(const torch::Device& device);

// A benchmark's timed part: its wall time, and its operators where profile_top > 0.
struct TimedPart {
  double seconds = 0;
  std::unique_ptr<OperatorProfile> profile;  // null without profiling
};

// Runs `warm_up()` untimed; then, with the device's work done and its peak memory reset, starts
// the profiler (profile_top > 0) and the clock, runs `timed()`, and stops the clock when the
// device's work is done.
template <typename WarmUp, typename Timed>
TimedPart time_after_warm_up(const torch::Device& device, int64_t profile_top, WarmUp&& warm_up, Timed&& timed) {
  warm_up();
  wait_for_device(device);
  reset_peak_device_memory(device);
  TimedPart part;
  if (profile_top > 0) part.profile = std::make_unique<OperatorProfile>();
  const auto start = std::chrono::steady_clock::now();
  timed();
  wait_for_device(device);
  part.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return part;
}

// Prints `record` as the bench's JSON line (with threads_at_end: `--threads 0` follows the load,
// docs/threads.md), then, where profiled, the top operators of `part` over its `repetitions`.
void print_bench_record(nlohmann::json record, TimedPart& part, int64_t profile_top, int64_t repetitions);

}  // namespace mixseq::cli
