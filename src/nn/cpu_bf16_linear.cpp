#include "mixseq/nn/cpu_bf16_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cstring>

#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/nn/bf16_rows.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

constexpr int64_t kRowBlock = 64;

// t in bf16, contiguous. LibTorch 1.13 converts fp32 one element at a time (25 us for a
// [256, 256] weight, 44 us for [992, 256] inputs); here in SIMD registers (nn/bf16_rows.h), the
// same values.
at::Tensor contiguous_bf16(const at::Tensor& t) {
  if (t.scalar_type() != at::kFloat) return t.to(at::kBFloat16).contiguous();
  const auto source = t.contiguous();
  auto out = at::empty(source.sizes(), source.options().dtype(at::kBFloat16));
  const float* in = source.data_ptr<float>();
  auto* rounded = out.data_ptr<at::BFloat16>();
  at::parallel_for(0, source.numel(), 16384, [&](int64_t begin, int64_t end) {
    narrow_row(in + begin, end - begin, rounded + begin);
  });
  return out;
}

// out's rows = bias [N], out [R, N] contiguous: row copies, where addmm's broadcast copy of the
// bias took 43 us for [960, 256] bf16.
void fill_rows(at::Tensor& out, const at::Tensor& bias) {
  const int64_t width = out.size(1);
  const auto* source = bias.data_ptr<at::BFloat16>();
  auto* rows = out.data_ptr<at::BFloat16>();
  at::parallel_for(0, out.size(0), 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) std::memcpy(rows + r * width, source, width * sizeof(at::BFloat16));
  });
}

// Whether oneDNN's matmul gets `rows` as two blocks (see the header).
bool splits_rows(int64_t rows) { return rows >= 256 && rows % kRowBlock != 0 && at::get_num_threads() >= 2; }

// out = a b (+ bias), bf16 [R, N] contiguous: when splits_rows(R), as rows [0, R0) and [R0, R)
// apart, R0 the largest multiple of 64.
void product_in_row_blocks(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias, at::Tensor& out) {
  const int64_t rows = a.size(0);
  if (bias.defined()) fill_rows(out, bias);
  const int64_t head = splits_rows(rows) ? rows - rows % kRowBlock : rows;
  for (const auto& [begin, count] : {std::pair{int64_t{0}, head}, std::pair{head, rows - head}}) {
    if (count == 0) continue;
    auto block = out.narrow(0, begin, count);  // contiguous: whole rows
    if (bias.defined()) {
      at::addmm_out(block, block, a.narrow(0, begin, count), b);  // adds to the bias in place
    } else {
      at::mm_out(block, a.narrow(0, begin, count), b);
    }
  }
}

class CpuBf16Linear : public torch::autograd::Function<CpuBf16Linear> {
 public:
  // x [R, K] any float dtype, weight [N, K], bias [N] or undefined -> bf16 [R, N].
  // (The bias comes as an optional: autograd's apply cannot take an undefined tensor.)
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& weight, const c10::optional<torch::Tensor>& bias) {
    const auto x16 = contiguous_bf16(x);
    const auto weight16 = contiguous_bf16(weight);
    auto y = at::empty({x.size(0), weight.size(0)}, x16.options());
    product_in_row_blocks(x16, weight16.t(), bias ? contiguous_bf16(*bias) : torch::Tensor(), y);
    context->save_for_backward({x16, weight16});
    context->saved_data["x_dtype"] = static_cast<int64_t>(x.scalar_type());
    context->saved_data["weight_dtype"] = static_cast<int64_t>(weight.scalar_type());
    if (bias) context->saved_data["bias_dtype"] = static_cast<int64_t>(bias->scalar_type());
    return y;
  }

  // fp32 gradients straight from oneDNN's GEMM in fp32; a bf16 input's in bf16, as autocast's.
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto& x16 = saved[0];
    const auto& weight16 = saved[1];
    const auto grad = gradients[0].to(at::kBFloat16).contiguous();  // [R, N]
    const auto dtype = [&](const char* key) { return static_cast<at::ScalarType>(context->saved_data[key].toInt()); };
    torch::Tensor grad_x, grad_weight, grad_bias;
    if (context->needs_input_grad(0)) {
      if (dtype("x_dtype") == at::kFloat) {
        grad_x = at::empty(x16.sizes(), x16.options().dtype(at::kFloat));
        bf16_matmul_into(grad, weight16, grad_x, /*accumulate=*/false);
      } else {
        grad_x = at::empty_like(x16);
        product_in_row_blocks(grad, weight16, torch::Tensor(), grad_x);
        grad_x = grad_x.to(dtype("x_dtype"));
      }
    }
    if (context->needs_input_grad(1)) {
      grad_weight = at::empty(weight16.sizes(), weight16.options().dtype(at::kFloat));  // [N, K]
      bf16_matmul_into(grad.t(), x16, grad_weight, /*accumulate=*/false);
      grad_weight = grad_weight.to(dtype("weight_dtype"));
    }
    const bool has_bias = context->saved_data.count("bias_dtype");  // else autograd knows two inputs only
    if (has_bias && context->needs_input_grad(2)) grad_bias = grad.sum(0).to(dtype("bias_dtype"));
    return {grad_x, grad_weight, grad_bias};
  }
};

}  // namespace

bool takes_cpu_bf16_linear(const torch::Tensor& x) {
  const bool bf16 = x.scalar_type() == at::kBFloat16 || (compat::is_autocast_enabled(c10::DeviceType::CPU) &&
                                                         compat::autocast_dtype(c10::DeviceType::CPU) == at::kBFloat16);
  if (!x.is_cpu() || !bf16) return false;
  // Without gradients (translation) autocast's at::linear keeps each weight's bf16 copy for the
  // whole autocast region, a search's every step; here weights are cast at each call. So then
  // only row counts that oneDNN would split badly come here.
  return at::GradMode::is_enabled() || splits_rows(x.numel() / std::max<int64_t>(1, x.size(-1)));
}

torch::Tensor cpu_bf16_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  auto shape = x.sizes().vec();
  shape.back() = weight.size(0);
  const auto optional_bias = bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt;
  return CpuBf16Linear::apply(x.reshape({-1, x.size(-1)}), weight, optional_bias).view(shape);  // [..., N]
}

}  // namespace mixseq
