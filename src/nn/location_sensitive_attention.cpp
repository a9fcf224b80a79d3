#include "mixseq/nn/location_sensitive_attention.h"

#include <torch/torch.h>

#include "mixseq/nn/glorot_layers.h"
#include "mixseq/nn/matrix_vector_cell.h"
#include "mixseq/util/error.h"

namespace mixseq {

LocationSensitiveAttentionImpl::LocationSensitiveAttentionImpl(const LocationSensitiveAttentionOptions& o) {
  MIXSEQ_CHECK(o.location_kernel >= 1 && o.location_kernel % 2 == 1,
               "location-sensitive attention: location_kernel must be odd, not ", o.location_kernel);
  MIXSEQ_CHECK(o.query_dim >= 1 && o.memory_dim >= 1 && o.attention_dim >= 1 && o.location_filters >= 1,
               "location-sensitive attention: every width must be >= 1");
  // Registered in the reference's order (its parameters are listed in this order).
  query_layer = register_module("query_layer", glorot_linear(o.query_dim, o.attention_dim, false, "tanh"));
  memory_layer = register_module("memory_layer", glorot_linear(o.memory_dim, o.attention_dim, false, "tanh"));
  v = register_module("v", glorot_linear(o.attention_dim, 1, false));
  location_conv = register_module("location_conv", glorot_conv1d(2, o.location_filters, o.location_kernel, false));
  location_dense = register_module("location_dense", glorot_linear(o.location_filters, o.attention_dim, false, "tanh"));
}

torch::Tensor LocationSensitiveAttentionImpl::process_memory(const torch::Tensor& memory) {
  return memory_layer(memory);  // [B, S, A]
}

torch::Tensor LocationSensitiveAttentionImpl::energies(const torch::Tensor& query,
                                                       const torch::Tensor& processed_memory,
                                                       const torch::Tensor& weights_cat) {
  const auto processed_query = matrix_vector_linear(query, query_layer->weight).unsqueeze(1);  // [B, 1, A]
  const auto location = location_dense(location_conv(weights_cat).transpose(1, 2));     // [B, S, A]
  return v(torch::tanh(processed_query + location + processed_memory)).squeeze(2);      // [B, S]
}

std::pair<torch::Tensor, torch::Tensor> LocationSensitiveAttentionImpl::forward(
    const torch::Tensor& query, const torch::Tensor& memory, const torch::Tensor& processed_memory,
    const torch::Tensor& weights_cat, const torch::Tensor& pad_mask) {
  auto e = energies(query, processed_memory, weights_cat);                               // [B, S]
  if (pad_mask.defined()) e = e.masked_fill(pad_mask, -std::numeric_limits<float>::infinity());
  const auto weights = torch::softmax(e, 1);                                             // [B, S]
  const auto context = torch::bmm(weights.unsqueeze(1), memory).squeeze(1);              // [B, E]
  return {context, weights};
}

}  // namespace mixseq
