#include "mixseq/nn/clipped_relu.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>
#include <cstring>

#include "mixseq/util/error.h"
#include "util/vector_clones.h"

namespace mixseq {
namespace {

// dx_i = g_i where 0 < x_i < ceiling, else 0.
MIXSEQ_VECTOR_CLONES
void pass_inside(const float* x, const float* g, float* dx, int64_t n, float ceiling) {
  for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0f && x[i] < ceiling ? g[i] : 0.0f;
}

// The same over bf16 bits. A bf16 value x lies in (0, ceiling) exactly when its bits b satisfy
// 0 < b < limit, the count of non-negative bf16 values below the ceiling (the sign bit, NaN and
// infinity all lie above): one unsigned comparison of b - 1, which wraps 0 to 0xFFFF, and a mask,
// which the compiler vectorizes where the float comparisons of the widened value stayed scalar
// (2 ns a value against 0.3).
MIXSEQ_VECTOR_CLONES
void pass_inside(const uint16_t* x, const uint16_t* g, uint16_t* dx, int64_t n, uint16_t limit) {
  const uint16_t last = uint16_t(limit - 1);
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t below = uint16_t(x[i] - 1);
    dx[i] = g[i] & uint16_t(-uint16_t(below < last));
  }
}

// The bf16 bits of the least non-negative bf16 value that is not below `ceiling` (> 0).
uint16_t bf16_limit(float ceiling) {
  uint32_t bits;
  std::memcpy(&bits, &ceiling, sizeof bits);
  uint16_t limit = uint16_t(bits >> 16);  // truncated: at most the ceiling
  const uint32_t widened = static_cast<uint32_t>(limit) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof value);
  return value < ceiling ? uint16_t(limit + 1) : limit;
}

at::Tensor clipped_relu_backward(const at::Tensor& x, const at::Tensor& grad, double ceiling) {
  const bool own = x.device().is_cpu() && grad.scalar_type() == x.scalar_type() &&
                   (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16);
  if (!own) return grad * at::logical_and(x > 0, x < ceiling);
  const auto xc = x.contiguous(), gc = grad.contiguous();
  auto dx = at::empty_like(xc, at::MemoryFormat::Contiguous);
  const int64_t n = xc.numel();
  const float c = static_cast<float>(ceiling);
  const uint16_t limit = bf16_limit(c);
  at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
    if (xc.scalar_type() == at::kFloat) {
      pass_inside(xc.data_ptr<float>() + begin, gc.data_ptr<float>() + begin, dx.data_ptr<float>() + begin,
                  end - begin, c);
    } else {
      const auto bits = [](const at::Tensor& t) { return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>()); };
      pass_inside(bits(xc) + begin, bits(gc) + begin, bits(dx) + begin, end - begin, limit);
    }
  });
  return dx;
}

class ClippedRelu : public torch::autograd::Function<ClippedRelu> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& x, double ceiling) {
    context->save_for_backward({x});  // not y: where the ceiling falls between two bf16 values, y
                                      // cannot tell x = the one below from an x above the ceiling
    context->saved_data["ceiling"] = ceiling;
    return at::clamp(x, 0.0, ceiling);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto x = context->get_saved_variables()[0];
    return {clipped_relu_backward(x, gradients[0], context->saved_data["ceiling"].toDouble()), at::Tensor()};
  }
};

}  // namespace

torch::Tensor clipped_relu(const torch::Tensor& x, double ceiling) {
  MIXSEQ_CHECK(ceiling > 0, "clipped_relu: the ceiling must be positive, not ", ceiling);
  if (!at::GradMode::is_enabled() || !x.requires_grad()) return at::clamp(x, 0.0, ceiling);
  return ClippedRelu::apply(x, ceiling);
}

}  // namespace mixseq
