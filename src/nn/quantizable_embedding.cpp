#include "mixseq/nn/quantizable_embedding.h"

#include <ATen/ATen.h>

#include "mixseq/util/error.h"

namespace mixseq {

torch::Tensor QuantizableEmbeddingImpl::forward(const torch::Tensor& tokens) {  // tokens: [...]
  auto rows = simulated_weight_.defined() ? at::embedding(simulated_weight_, tokens)
                                          : torch::nn::EmbeddingImpl::forward(tokens);  // [..., D]
  if (observer_) observer_(rows);
  return rows;
}

void QuantizableEmbeddingImpl::set_weight_grid(const QuantizationGrid& grid) {
  MIXSEQ_CHECK(!grid.defined() || !grid.per_channel() || grid.scale.size(0) == weight.size(0),
               "quantized embedding: ", grid.scale.size(0), " row scales for ", weight.size(0), " rows");
  simulated_weight_ = torch::Tensor();
  if (!grid.defined()) return;
  torch::NoGradGuard no_grad;
  simulated_weight_ = quantize_dequantize(weight.to(at::kFloat), grid);
}

}  // namespace mixseq
