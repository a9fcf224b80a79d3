// Where a benchmark's time goes, by LibTorch operator: LibTorch's profiler records every
// operator call while an OperatorProfile is alive; top() then ranks the operators by self time
// (their own time less that of the operators they called), which adds up to the wall time of
// the work on the calling thread.
#pragma once

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace torch::autograd::profiler {
struct RecordProfile;
}

namespace mixseq::cli {

struct OperatorTime {
  std::string name;     // e.g. "aten::addmm"
  double self_ms = 0;   // summed over the profiled calls
  int64_t calls = 0;
};

class OperatorProfile {
 public:
  OperatorProfile();
  ~OperatorProfile();
  // Stops recording (once) and returns the `count` operators with the most self time, the most first.
  std::vector<OperatorTime> top(size_t count);

 private:
  std::ostringstream trace_;  // Chrome trace JSON, written when the recording stops
  std::unique_ptr<torch::autograd::profiler::RecordProfile> recording_;
};

// Prints top(count) as one JSON line per operator: its self time per repetition (a step or a
// batch of the benchmark), calls per repetition and share of the wall time `seconds` that the
// `repetitions` took. Profiling slows the run down; the figures of a profiled run are for the shares.
void print_operator_profile(OperatorProfile& profile, int64_t count, double seconds, int64_t repetitions);

}  // namespace mixseq::cli
