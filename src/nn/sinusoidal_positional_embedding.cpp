#include "mixseq/nn/sinusoidal_positional_embedding.h"

#include <ATen/ATen.h>

#include <cmath>

#include "mixseq/util/error.h"

namespace mixseq {

torch::Tensor sinusoidal_positional_embedding(int64_t first, int64_t count, int64_t dim, const torch::Device& device) {
  MIXSEQ_CHECK(dim >= 4 && dim % 2 == 0, "sinusoidal positional embeddings need an even width of at least 4, got ",
               dim);
  const int64_t half = dim / 2;
  const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  const double step = -std::log(10000.0) / static_cast<double>(half - 1);
  const auto frequencies = at::exp(at::arange(half, options) * step);       // [D/2]
  const auto positions = at::arange(first, first + count, options);         // [T]
  const auto angles = positions.unsqueeze(1) * frequencies.unsqueeze(0);    // [T, D/2]
  return at::cat({at::sin(angles), at::cos(angles)}, 1);                    // [T, D]
}

}  // namespace mixseq
