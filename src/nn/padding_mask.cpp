#include "mixseq/nn/padding_mask.h"

#include <ATen/ATen.h>

namespace mixseq {

torch::Tensor padding_mask(const torch::Tensor& lengths, int64_t max_length) {
  const auto positions = at::arange(max_length, lengths.options().dtype(at::kLong));  // [S]
  return positions.unsqueeze(0) >= lengths.unsqueeze(1);                              // [B, S]
}

}  // namespace mixseq
