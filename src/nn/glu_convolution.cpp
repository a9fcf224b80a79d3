#include "mixseq/nn/glu_convolution.h"

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "mixseq/nn/cpu_float_linear.h"
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
  const int64_t window = options.kernel_width * options.in_channels;
  product_ = register_module("product", QuantizableLinear(
                                            [v = weight_v, g = weight_g, window] {
                                              return at::_weight_norm(v, g, 2).reshape({window, -1}).t();  // [2O, K I]
                                            },
                                            bias));
}

torch::Tensor GluConvolutionImpl::weight() const { return at::_weight_norm(weight_v, weight_g, 2); }

torch::Tensor GluConvolutionImpl::forward(const torch::Tensor& x, int64_t padding) {
  MIXSEQ_CHECK(x.dim() == 3 && x.size(2) == in_channels_, "GluConvolution: input must be [T, B, ", in_channels_,
               "], got ", x.sizes());
  const auto dtype = x.scalar_type();
  const auto input = padding > 0 ? at::constant_pad_nd(x, {0, 0, 0, 0, padding, padding}) : x;  // [T + 2p, B, I]
  const int64_t out_length = input.size(0) - kernel_width_ + 1, batch = input.size(1);
  MIXSEQ_CHECK(out_length >= 1, "GluConvolution: ", input.size(0), " padded time steps are fewer than the kernel (",
               kernel_width_, ")");
  // One product over the K time-shifted slices side by side, [T' B, K I] x [K I, 2O], rather
  // than conv_tbc's K products accumulated into the output: fewer, larger products run faster
  // on the CPU's BLAS (and a decoding step's window is one product of B rows).
  std::vector<torch::Tensor> shifted;
  for (int64_t k = 0; k < kernel_width_; ++k) shifted.push_back(input.narrow(0, k, out_length));
  const auto windows = kernel_width_ == 1 ? input : at::cat(shifted, 2);                 // [T', B, K I]
  const auto rows = windows.reshape({out_length * batch, -1});                           // [T' B, K I]
  const auto y = product_->quantized_or_observed()
                     ? product_(rows)
                     : float_linear_or_aten(rows, weight().to(dtype).reshape({kernel_width_ * in_channels_, -1}).t(),
                                            bias.to(dtype));
  // y: [T' B, 2O]
  return at::glu(y.view({out_length, batch, -1}), 2);                                    // [T', B, O]
}

}  // namespace mixseq
