#include "mixseq/nn/residual_sublayer.h"

#include "mixseq/nn/hashed_dropout.h"

namespace mixseq {

torch::Tensor residual_sublayer(const torch::Tensor& x, torch::nn::LayerNorm& norm, double dropout, bool training,
                                bool normalize_before,
                                const std::function<torch::Tensor(const torch::Tensor&)>& sublayer,
                                QuantizationPointImpl* sum) {
  if (normalize_before) return through(sum, residual_dropout(x, sublayer(norm(x)), dropout, training));
  return norm(through(sum, residual_dropout(x, sublayer(x), dropout, training)));
}

}  // namespace mixseq
