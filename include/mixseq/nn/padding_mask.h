// The padding mask of a right-padded batch: which positions hold no token.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace mixseq {

// lengths [B] int64 -> [B, max_length] bool, true at padding (position >= length), on the
// device of `lengths`.
torch::Tensor padding_mask(const torch::Tensor& lengths, int64_t max_length);

}  // namespace mixseq
