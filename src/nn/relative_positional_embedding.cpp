#include "mixseq/nn/relative_positional_embedding.h"

#include <ATen/ATen.h>

#include "mixseq/util/error.h"

namespace mixseq {

torch::Tensor relative_positional_embedding(int64_t key_length, int64_t dim, int64_t clamp_len,
                                            const torch::Device& device) {
  MIXSEQ_CHECK(dim >= 2 && dim % 2 == 0, "relative positional embeddings need an even width, got ", dim);
  MIXSEQ_CHECK(key_length >= 0, "relative positional embeddings: negative key length ", key_length);
  const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  // The reference's arithmetic, in fp32: 1 / 10000^(arange(0, D, 2) / D).
  const auto inverse_frequencies = at::pow(10000.0, at::arange(0.0, static_cast<double>(dim), 2.0, options) / dim)
                                       .reciprocal();                      // [D/2]
  auto distances = at::arange(static_cast<double>(key_length - 1), -1.0, -1.0, options);  // [K]: K-1 .. 0
  if (clamp_len > 0) distances = distances.clamp_max(static_cast<double>(clamp_len));
  const auto angles = at::outer(distances, inverse_frequencies);           // [K, D/2]
  return at::cat({angles.sin(), angles.cos()}, 1);                         // [K, D]
}

}  // namespace mixseq
