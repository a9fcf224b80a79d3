#include "mixseq/nn/glu_convolution.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/nn/cpu_float_linear.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// The output frames [begin, end) that tap k of a width-K convolution over T input frames, padded
// by `padding` zero frames at both ends, takes from real input frames: frame t reads input frame
// t + k - padding.
struct TapRange {
  int64_t begin = 0, end = 0;
  int64_t length() const { return end - begin; }
};

TapRange tap_range(int64_t k, int64_t padding, int64_t input_length, int64_t output_length) {
  return {std::max<int64_t>(0, padding - k), std::min<int64_t>(output_length, input_length + padding - k)};
}

// rows [first, first + count) of a [T, B, C] tensor as a [count B, C] matrix (contiguous).
torch::Tensor frame_rows(const torch::Tensor& t, int64_t first, int64_t count) {
  return t.narrow(0, first, count).view({count * t.size(1), t.size(2)});
}

// The fp32 convolution over time of [T, B, I] by W [K, I, N] and bias [N], `padding` zero frames
// at both ends, without forming the padded input or the windows: tap k is one product of a run of
// input frames into a run of output frames, accumulated through oneDNN's sgemm (the layout is
// time-major, so each run is one contiguous matrix). Backward takes the same runs: dx by
// accumulated dy W_kᵀ, dW_k = x_kᵀ dy, db the rows' sum. The products are those of the windows'
// one product split by tap, so the FLOPs are the same; what goes is the padded copy, the windows'
// copy (K times the input) and, backward, their gradients' copies and sums.
class TimeConvolution : public torch::autograd::Function<TimeConvolution> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias, int64_t padding) {
    const int64_t length = x.size(0), batch = x.size(1), kernel = weight.size(0), outputs = weight.size(2);
    const int64_t out_length = length + 2 * padding - kernel + 1;
    auto y = at::empty({out_length, batch, outputs}, x.options());
    y.copy_(bias.view({1, 1, outputs}).expand_as(y));
    for (int64_t k = 0; k < kernel; ++k) {
      const auto run = tap_range(k, padding, length, out_length);
      if (run.length() <= 0) continue;
      auto into = frame_rows(y, run.begin, run.length());
      float_matmul_into(frame_rows(x, run.begin + k - padding, run.length()), weight.select(0, k), into,
                        /*accumulate=*/true);
    }
    context->save_for_backward({x, weight});
    context->saved_data["padding"] = padding;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &x = saved[0], &weight = saved[1];
    const int64_t padding = context->saved_data["padding"].toInt();
    const auto grad = gradients[0].contiguous();  // [T', B, N]
    const int64_t length = x.size(0), kernel = weight.size(0), out_length = grad.size(0);
    torch::Tensor grad_x, grad_weight, grad_bias;
    if (context->needs_input_grad(0)) grad_x = at::zeros_like(x);
    if (context->needs_input_grad(1)) grad_weight = at::zeros_like(weight);
    for (int64_t k = 0; k < kernel; ++k) {
      const auto run = tap_range(k, padding, length, out_length);
      if (run.length() <= 0) continue;
      const auto grad_rows = frame_rows(grad, run.begin, run.length());
      if (grad_x.defined()) {
        auto into = frame_rows(grad_x, run.begin + k - padding, run.length());
        float_matmul_into(grad_rows, weight.select(0, k).t(), into, /*accumulate=*/true);
      }
      if (grad_weight.defined()) {
        auto into = grad_weight.select(0, k);
        float_matmul_into(frame_rows(x, run.begin + k - padding, run.length()).t(), grad_rows, into,
                          /*accumulate=*/false);
      }
    }
    if (context->needs_input_grad(2)) grad_bias = grad.view({-1, grad.size(2)}).sum(0);
    return {grad_x, grad_weight, grad_bias, torch::Tensor()};
  }
};

}  // namespace

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
  MIXSEQ_CHECK(padding >= 0, "GluConvolution: padding must be >= 0, got ", padding);
  MIXSEQ_CHECK(x.size(0) + 2 * padding >= kernel_width_, "GluConvolution: ", x.size(0) + 2 * padding,
               " padded time steps are fewer than the kernel (", kernel_width_, ")");
  const bool quantized = product_->quantized_or_observed();
  const auto w = quantized ? torch::Tensor() : weight().to(x.scalar_type());  // [K, I, 2O]
  const auto b = quantized ? torch::Tensor() : bias.to(x.scalar_type());
  if (!quantized && takes_cpu_float_linear(x, w.view({-1, w.size(2)}), b))
    return at::glu(TimeConvolution::apply(x.contiguous(), w, b, padding), 2);  // [T', B, O]
  const auto input = padding > 0 ? at::constant_pad_nd(x, {0, 0, 0, 0, padding, padding}) : x;  // [T + 2p, B, I]
  const int64_t out_length = input.size(0) - kernel_width_ + 1, batch = input.size(1);
  // Elsewhere (quantized or observed, bf16, ATen's products): one product over the K time-shifted
  // slices side by side, [T' B, K I] x [K I, 2O], rather than conv_tbc's K products accumulated
  // into the output (a decoding step's window is one product of B rows).
  std::vector<torch::Tensor> shifted;
  for (int64_t k = 0; k < kernel_width_; ++k) shifted.push_back(input.narrow(0, k, out_length));
  const auto windows = kernel_width_ == 1 ? input : at::cat(shifted, 2);                 // [T', B, K I]
  const auto rows = windows.reshape({out_length * batch, -1});                           // [T' B, K I]
  const auto y = quantized ? product_(rows)
                           : float_linear_or_aten(rows, w.reshape({kernel_width_ * in_channels_, -1}).t(), b);
  // y: [T' B, 2O]
  return at::glu(y.view({out_length, batch, -1}), 2);                                    // [T', B, O]
}

}  // namespace mixseq
