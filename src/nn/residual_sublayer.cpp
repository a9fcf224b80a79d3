#include "mixseq/nn/residual_sublayer.h"

namespace mixseq {

torch::Tensor residual_sublayer(const torch::Tensor& x, torch::nn::LayerNorm& norm, torch::nn::Dropout& dropout,
                                bool normalize_before,
                                const std::function<torch::Tensor(const torch::Tensor&)>& sublayer,
                                QuantizationPointImpl* sum) {
  if (normalize_before) return through(sum, x + dropout(sublayer(norm(x))));
  return norm(through(sum, x + dropout(sublayer(x))));
}

}  // namespace mixseq
