#include "mixseq/nn/cpu_float_linear.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "mixseq/nn/bf16_matmul.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

class CpuFloatLinear : public torch::autograd::Function<CpuFloatLinear> {
 public:
  // x [R, K] contiguous, weight [N, K], bias [N] or nullopt -> [R, N]. (The bias comes as an
  // optional: autograd's apply cannot take an undefined tensor.)
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& weight, const c10::optional<torch::Tensor>& bias) {
    auto y = at::empty({x.size(0), weight.size(0)}, x.options());
    float_matmul_into(x, weight.t(), y, /*accumulate=*/false);
    if (bias) y.add_(*bias);
    context->save_for_backward({x, weight});
    context->saved_data["has_bias"] = bias.has_value();
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &x = saved[0], &weight = saved[1];
    const auto grad = gradients[0].contiguous();  // [R, N]
    torch::Tensor grad_x, grad_weight, grad_bias;
    if (context->needs_input_grad(0)) {
      grad_x = at::empty_like(x);
      float_matmul_into(grad, weight, grad_x, /*accumulate=*/false);
    }
    if (context->needs_input_grad(1)) {
      grad_weight = at::empty(weight.sizes(), weight.options());
      float_matmul_into(grad.t(), x, grad_weight, /*accumulate=*/false);
    }
    // Without a bias autograd knows two inputs only: the third gradient is then left undefined.
    if (context->saved_data["has_bias"].toBool() && context->needs_input_grad(2)) grad_bias = grad.sum(0);
    return {grad_x, grad_weight, grad_bias};
  }
};

}  // namespace

bool takes_cpu_float_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const auto fp32_cpu = [](const torch::Tensor& t) { return t.scalar_type() == at::kFloat && t.device().is_cpu(); };
  return fp32_cpu(x) && fp32_cpu(weight) && weight.dim() == 2 && (!bias.defined() || fp32_cpu(bias)) &&
         x.dim() >= 1 && !compat::is_autocast_enabled(c10::DeviceType::CPU) && float_matmul_is_direct();
}

torch::Tensor cpu_float_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  auto shape = x.sizes().vec();
  shape.back() = weight.size(0);
  const auto optional_bias = bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt;
  return CpuFloatLinear::apply(x.reshape({-1, x.size(-1)}).contiguous(), weight, optional_bias).view(shape);
}

torch::Tensor float_linear_or_aten(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  return takes_cpu_float_linear(x, weight, bias) ? cpu_float_linear(x, weight, bias) : at::linear(x, weight, bias);
}

}  // namespace mixseq
