#include "mixseq/nn/weight_norm_linear.h"

#include <ATen/ATen.h>

#include <cmath>

#include "mixseq/nn/cpu_float_linear.h"
#include "mixseq/util/error.h"

namespace mixseq {

WeightNormLinearImpl::WeightNormLinearImpl(const WeightNormLinearOptions& options) {
  MIXSEQ_CHECK(options.in_features > 0 && options.out_features > 0, "WeightNormLinear: in_features (",
               options.in_features, ") and out_features (", options.out_features, ") must be positive");
  MIXSEQ_CHECK(options.dropout >= 0.0 && options.dropout < 1.0, "WeightNormLinear: dropout must be in [0, 1), got ",
               options.dropout);
  const double std = std::sqrt((1.0 - options.dropout) / static_cast<double>(options.in_features));
  auto v = at::empty({options.out_features, options.in_features}).normal_(0.0, std);  // [O, I]
  auto g = at::norm_except_dim(v, 2, 0);                                               // [O, 1]
  weight_g = register_parameter("weight_g", g);
  weight_v = register_parameter("weight_v", v);
  bias = register_parameter("bias", at::zeros({options.out_features}));
  product_ = register_module("product", QuantizableLinear([v = weight_v, g = weight_g] { return at::_weight_norm(v, g, 0); },
                                                          bias));
}

torch::Tensor WeightNormLinearImpl::weight() const { return at::_weight_norm(weight_v, weight_g, 0); }

torch::Tensor WeightNormLinearImpl::forward(const torch::Tensor& x) {
  if (product_->quantized_or_observed()) return product_(x);
  return float_linear_or_aten(x, weight(), bias);
}

}  // namespace mixseq
