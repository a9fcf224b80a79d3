#include "mixseq/nn/relative_shift.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// x [..., T, K] contiguous, seen so that element (i, j) of each [T, K] matrix is the one at
// offset (T - 1) + i (K - 1) + j of that matrix: x[i, j + T - 1 - i] inside the band.
torch::Tensor shifted_view(const torch::Tensor& x) {
  auto strides = x.strides().vec();
  strides[strides.size() - 2] = x.size(-1) - 1;
  return x.as_strided(x.sizes(), strides, x.storage_offset() + x.size(-2) - 1);
}

class RelativeShift : public torch::autograd::Function<RelativeShift> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* /*context*/, const torch::Tensor& x) {
    return shifted_view(x.contiguous()).contiguous();  // [..., T, K]
  }

  // The view reads every element of x at most once, except that (i, K - 1) and (i + 1, 0) read the
  // same one: scatter the first K - 1 columns, then add the last.
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* /*context*/,
                                                 torch::autograd::variable_list gradients) {
    const auto& grad_y = gradients[0];                      // [..., T, K]
    auto grad_x = at::zeros(grad_y.sizes(), grad_y.options());  // [..., T, K]
    auto view = shifted_view(grad_x);
    const int64_t k = grad_y.size(-1);
    view.narrow(-1, 0, k - 1).copy_(grad_y.narrow(-1, 0, k - 1));
    view.narrow(-1, k - 1, 1).add_(grad_y.narrow(-1, k - 1, 1));
    return {grad_x};
  }
};

}  // namespace

torch::Tensor relative_shift(const torch::Tensor& x) {
  MIXSEQ_CHECK(x.dim() >= 2 && x.size(-2) >= 1 && x.size(-2) <= x.size(-1),
               "relative_shift needs [..., T, K] scores with 1 <= T <= K (T queries, K keys), got ", x.sizes());
  return RelativeShift::apply(x);
}

}  // namespace mixseq
