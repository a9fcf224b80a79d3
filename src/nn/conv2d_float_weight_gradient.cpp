#include "mixseq/nn/conv2d_float_weight_gradient.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <vector>

#include "util/torch_compat.h"

namespace mixseq {
namespace {

class Conv2dFloatWeightGradient : public torch::autograd::Function<Conv2dFloatWeightGradient> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& x, const at::Tensor& weight,
                               const at::Tensor& bias, std::vector<int64_t> stride, std::vector<int64_t> padding) {
    auto y = at::conv2d(x, weight, bias, stride, padding);  // autocast's: bf16 operands
    context->save_for_backward({x, weight});
    context->saved_data["stride"] = stride;
    context->saved_data["padding"] = padding;
    context->saved_data["bias"] = bias.defined();
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &x = saved[0], &weight = saved[1];
    const auto stride = context->saved_data["stride"].toIntVector();
    const auto padding = context->saved_data["padding"].toIntVector();
    const bool has_bias = context->saved_data["bias"].toBool();
    const auto dtype = weight.scalar_type();  // fp32: every operand widened to it
    const auto grad = gradients[0].to(dtype);
    const std::vector<int64_t> bias_sizes{weight.size(0)};
    auto [dx, dw, db] = at::convolution_backward(
        grad, x.to(dtype), weight, bias_sizes, stride, padding, /*dilation=*/{1, 1},
        /*transposed=*/false, /*output_padding=*/{0, 0}, /*groups=*/1,
        {context->needs_input_grad(0), context->needs_input_grad(1), has_bias && context->needs_input_grad(2)});
    return {dx.defined() ? dx.to(x.scalar_type()) : dx, dw, db, at::Tensor(), at::Tensor()};
  }
};

bool float_weight_gradient_applies(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (!x.device().is_cpu() || !compat::is_autocast_enabled(c10::kCPU) ||
      compat::autocast_dtype(c10::kCPU) != at::kBFloat16)
    return false;
  if (weight.scalar_type() != at::kFloat || (bias.defined() && bias.scalar_type() != at::kFloat)) return false;
  if (!at::isFloatingType(x.scalar_type()) || !at::GradMode::is_enabled()) return false;
  return weight.requires_grad() || (bias.defined() && bias.requires_grad());
}

}  // namespace

torch::Tensor conv2d_float_weight_gradient(const torch::Tensor& x, const torch::Tensor& weight,
                                           const torch::Tensor& bias, torch::IntArrayRef stride,
                                           torch::IntArrayRef padding) {
  if (!float_weight_gradient_applies(x, weight, bias)) return at::conv2d(x, weight, bias, stride, padding);
  return Conv2dFloatWeightGradient::apply(x, weight, bias, stride.vec(), padding.vec());
}

}  // namespace mixseq
