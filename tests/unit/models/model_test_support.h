// Helpers shared by the model tests.
#pragma once

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mixseq/text/vocabulary.h"
#include "util/torch_compat.h"

namespace mixseq::test {

// A right-padded batch [B, max length] of random non-special tokens below `vocab`.
inline torch::Tensor random_tokens(const std::vector<int64_t>& lengths, int64_t vocab) {
  const int64_t width = *std::max_element(lengths.begin(), lengths.end());
  auto tokens = at::randint(kSpecialSymbolCount, vocab, {static_cast<int64_t>(lengths.size()), width}, at::kLong);
  for (size_t i = 0; i < lengths.size(); ++i) tokens[i].slice(0, lengths[i]).fill_(kPadId);
  return tokens;
}

// bf16 autocast on the CPU for the guard's lifetime.
class CpuAutocast {
 public:
  CpuAutocast() { compat::set_autocast(c10::kCPU, true, at::kBFloat16); }
  ~CpuAutocast() {
    compat::set_autocast(c10::kCPU, false, at::kBFloat16);
    at::autocast::clear_cache();  // the bf16 copies of the weights it made
  }
  CpuAutocast(const CpuAutocast&) = delete;
  CpuAutocast& operator=(const CpuAutocast&) = delete;
};

}  // namespace mixseq::test
