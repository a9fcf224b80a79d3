#include "mixseq/nn/parameter_count.h"

#include <unordered_set>

namespace mixseq {

int64_t count_parameters(const torch::nn::Module& module) {
  std::unordered_set<const void*> seen;
  int64_t count = 0;
  for (const auto& parameter : module.parameters())
    if (seen.insert(parameter.unsafeGetTensorImpl()).second) count += parameter.numel();
  return count;
}

}  // namespace mixseq
