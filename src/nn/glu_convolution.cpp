#include "mixseq/nn/glu_convolution.h"

#include <ATen/ATen.h>

#include <cmath>

#include "mixseq/util/error.h"

namespace mixseq {

GluConvolutionImpl::GluConvolutionImpl(const GluConvolutionOptions& options)
    : in_channels_(options.in_channels), kernel_width_(options.kernel_width) {
  MIXSEQ_CHECK(options.in_channels > 0 && options.out_channels > 0 && options.kernel_width > 0,
               "GluConvolution: in_channels (", options.in_channels, "), out_channels (", options.out_channels,
               ") and kernel_width (", options.kernel_width, ") must be positive");
  MIXSEQ_CHECK(options.dropout >= 0.0 && options.dropout < 1.0, "GluConvolution: dropout must be in [0, 1), got ",
               options.dropout);
  const double std = std::sqrt(4.0 * (1.0 - options.dropout) /
                               static_cast<double>(options.kernel_width * options.in_channels));
  auto v = at::empty({options.kernel_width, options.in_channels, 2 * options.out_channels}).normal_(0.0, std);
  auto g = at::norm_except_dim(v, 2, 2);  // [1, 1, 2O]
  weight_g = register_parameter("weight_g", g);
  weight_v = register_parameter("weight_v", v);
  bias = register_parameter("bias", at::zeros({2 * options.out_channels}));
}

torch::Tensor GluConvolutionImpl::weight() const { return at::_weight_norm(weight_v, weight_g, 2); }

torch::Tensor GluConvolutionImpl::forward(const torch::Tensor& x, int64_t padding) {
  MIXSEQ_CHECK(x.dim() == 3 && x.size(2) == in_channels_, "GluConvolution: input must be [T, B, ", in_channels_,
               "], got ", x.sizes());
  const auto dtype = x.scalar_type();
  const auto y = at::conv_tbc(x.contiguous(), weight().to(dtype), bias.to(dtype), padding);  // [T', B, 2O]
  return at::glu(y, 2);                                                                      // [T', B, O]
}

}  // namespace mixseq
