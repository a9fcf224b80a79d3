#include "mixseq/nn/cpu_float_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/util/error.h"
#include "util/torch_compat.h"
#include "util/vector_clones.h"

namespace mixseq {
namespace {

// row <- max(row + bias, 0), NaN kept as at::relu keeps it.
MIXSEQ_VECTOR_CLONES
void add_bias_relu_row(float* __restrict row, const float* __restrict bias, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float value = row[i] + bias[i];
    row[i] = value < 0.0f ? 0.0f : value;
  }
}

MIXSEQ_VECTOR_CLONES
void relu_row(float* __restrict row, int64_t n) {
  for (int64_t i = 0; i < n; ++i) row[i] = row[i] < 0.0f ? 0.0f : row[i];
}

// out <- grad where the ReLU's output is above 0, else 0 (at::threshold_backward's rule).
MIXSEQ_VECTOR_CLONES
void relu_gradient(const float* __restrict grad, const float* __restrict output, float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = output[i] <= 0.0f ? 0.0f : grad[i];
}

// Rows of [R, N] per task: about 16K elements, as the element-wise kernels of nn/hashed_dropout.h.
int64_t row_grain(int64_t columns) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(columns, 1)); }

// y [R, N] += bias, then ReLU: one pass over the product.
void add_bias_relu(torch::Tensor& y, const c10::optional<torch::Tensor>& bias) {
  const int64_t columns = y.size(1);
  float* rows = y.data_ptr<float>();
  const auto b = bias ? bias->contiguous() : torch::Tensor();
  const float* b_data = bias ? b.data_ptr<float>() : nullptr;
  at::parallel_for(0, y.size(0), row_grain(columns), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      if (b_data != nullptr) {
        add_bias_relu_row(rows + r * columns, b_data, columns);
      } else {
        relu_row(rows + r * columns, columns);
      }
    }
  });
}

// y [R, N] += bias (where defined), then ReLU where `relu`: the products' one pass after sgemm.
void add_bias(torch::Tensor& y, const c10::optional<torch::Tensor>& bias, bool relu) {
  if (relu) {
    add_bias_relu(y, bias);
  } else if (bias) {
    y.add_(*bias);
  }
}

class CpuFloatLinear : public torch::autograd::Function<CpuFloatLinear> {
 public:
  // x [R, K] contiguous, weight [N, K], bias [N] or nullopt -> [R, N], then ReLU where `relu`.
  // (The bias comes as an optional: autograd's apply cannot take an undefined tensor.)
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& weight, const c10::optional<torch::Tensor>& bias, bool relu) {
    auto y = at::empty({x.size(0), weight.size(0)}, x.options());
    float_matmul_into(x, weight.t(), y, /*accumulate=*/false);
    add_bias(y, bias, relu);
    if (relu) {
      context->save_for_backward({x, weight, y});  // the output: the ReLU's mask, no copy of it
    } else {
      context->save_for_backward({x, weight});
    }
    context->saved_data["has_bias"] = bias.has_value();
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &x = saved[0], &weight = saved[1];
    auto grad = gradients[0].contiguous();  // [R, N]
    if (saved.size() == 3) {                // through the ReLU first
      const auto& output = saved[2];
      auto masked = at::empty_like(grad);
      const int64_t columns = grad.size(1);
      const float* in = grad.data_ptr<float>();
      const float* kept = output.data_ptr<float>();
      float* out = masked.data_ptr<float>();
      at::parallel_for(0, grad.size(0), row_grain(columns), [&](int64_t begin, int64_t end) {
        relu_gradient(in + begin * columns, kept + begin * columns, out + begin * columns, (end - begin) * columns);
      });
      grad = masked;
    }
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
    return {grad_x, grad_weight, grad_bias, torch::Tensor()};
  }
};

torch::Tensor float_product(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, bool relu) {
  auto shape = x.sizes().vec();
  shape.back() = weight.size(0);
  const auto optional_bias = bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt;
  return CpuFloatLinear::apply(x.reshape({-1, x.size(-1)}).contiguous(), weight, optional_bias, relu).view(shape);
}

}  // namespace

bool takes_cpu_float_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const auto fp32_cpu = [](const torch::Tensor& t) { return t.scalar_type() == at::kFloat && t.device().is_cpu(); };
  return fp32_cpu(x) && fp32_cpu(weight) && weight.dim() == 2 && (!bias.defined() || fp32_cpu(bias)) &&
         x.dim() >= 1 && !compat::is_autocast_enabled(c10::DeviceType::CPU) && float_matmul_is_direct();
}

torch::Tensor cpu_float_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  return float_product(x, weight, bias, /*relu=*/false);
}

torch::Tensor cpu_float_linear_relu(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  return float_product(x, weight, bias, /*relu=*/true);
}

torch::Tensor float_linear_or_aten(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  return takes_cpu_float_linear(x, weight, bias) ? cpu_float_linear(x, weight, bias) : at::linear(x, weight, bias);
}

TransposedWeight& TransposedWeight::operator=(const TransposedWeight&) {
  drop();
  return *this;
}

void TransposedWeight::drop() {
  const std::lock_guard<std::mutex> hold(lock_);
  source_ = TensorIdentity();
  columns_ = torch::Tensor();
}

bool TransposedWeight::applies(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const bool records = at::GradMode::is_enabled() &&
                       (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
  return !records && takes_cpu_float_linear(x, weight, bias);
}

torch::Tensor TransposedWeight::product(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                        bool relu, double weight_scale) {
  MIXSEQ_CHECK(applies(x, weight, bias), "TransposedWeight: a product that cpu_float_linear would not take ",
               "or that records a gradient (", x.scalar_type(), " x ", weight.scalar_type(), ")");
  torch::Tensor columns;
  {
    const std::lock_guard<std::mutex> hold(lock_);
    const bool same = columns_.defined() && source_.matches(weight) && scale_ == weight_scale;
    if (!same) {
      const at::NoGradGuard no_grad;
      columns_ = (weight_scale == 1.0 ? weight : weight * weight_scale).t().contiguous();  // [K, N]
      source_ = TensorIdentity(weight);
      scale_ = weight_scale;
    }
    columns = columns_;
  }
  const int64_t K = weight.size(1);
  const auto rows = x.reshape({-1, K});
  auto y = at::empty({rows.size(0), weight.size(0)}, rows.options());
  float_matmul_into(rows.contiguous(), columns, y, /*accumulate=*/false);
  add_bias(y, bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt, relu);
  auto sizes = x.sizes().vec();
  sizes.back() = weight.size(0);
  return y.view(sizes);
}

torch::Tensor TransposedWeight::linear(const torch::Tensor& x, const torch::Tensor& weight) {
  if (applies(x, weight, {})) return product(x, weight, {}, /*relu=*/false);
  drop();
  return float_linear_or_aten(x, weight, {});
}

}  // namespace mixseq
