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

// The gradient of reading x through shifted_view. The view reads every element of x once, except
// the first T - 1 of each [T, K] matrix (never read: gradient 0) and the elements that both
// (i, K - 1) and (i + 1, 0) read (gradients added): scatter the first K - 1 columns, then add
// the last column's rows 0 .. T - 2 and copy its last row, whose element nothing else reads.
torch::Tensor shift_backward(const torch::Tensor& grad_y) {  // [..., T, K]
  auto grad_x = at::empty(grad_y.sizes(), grad_y.options());  // [..., T, K]
  const int64_t t = grad_y.size(-2), k = grad_y.size(-1);
  grad_x.view({-1, t * k}).narrow(1, 0, t - 1).zero_();
  auto view = shifted_view(grad_x);
  view.narrow(-1, 0, k - 1).copy_(grad_y.narrow(-1, 0, k - 1));
  const auto last_column = view.narrow(-1, k - 1, 1), grad_last_column = grad_y.narrow(-1, k - 1, 1);
  last_column.narrow(-2, 0, t - 1).add_(grad_last_column.narrow(-2, 0, t - 1));
  last_column.narrow(-2, t - 1, 1).copy_(grad_last_column.narrow(-2, t - 1, 1));
  return grad_x;
}

class RelativeShift : public torch::autograd::Function<RelativeShift> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* /*context*/, const torch::Tensor& x) {
    return shifted_view(x.contiguous()).contiguous();  // [..., T, K]
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* /*context*/,
                                                 torch::autograd::variable_list gradients) {
    return {shift_backward(gradients[0])};
  }
};

class AddRelativeShift : public torch::autograd::Function<AddRelativeShift> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* /*context*/, const torch::Tensor& content,
                               const torch::Tensor& position) {
    return at::add(content, shifted_view(position.contiguous()));  // [..., T, K]
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* /*context*/,
                                                 torch::autograd::variable_list gradients) {
    return {gradients[0], shift_backward(gradients[0])};
  }
};

void check_scores(const torch::Tensor& x) {
  MIXSEQ_CHECK(x.dim() >= 2 && x.size(-2) >= 1 && x.size(-2) <= x.size(-1),
               "relative_shift needs [..., T, K] scores with 1 <= T <= K (T queries, K keys), got ", x.sizes());
}

}  // namespace

torch::Tensor relative_shift_view(const torch::Tensor& x) {
  check_scores(x);
  MIXSEQ_CHECK(x.is_contiguous(), "relative_shift_view needs a contiguous tensor");
  return shifted_view(x);
}

torch::Tensor relative_shift_backward(const torch::Tensor& grad) {
  check_scores(grad);
  return shift_backward(grad);
}

torch::Tensor relative_shift(const torch::Tensor& x) {
  check_scores(x);
  return RelativeShift::apply(x);
}

torch::Tensor add_relative_shift(const torch::Tensor& content, const torch::Tensor& position) {
  check_scores(position);
  MIXSEQ_CHECK(content.sizes() == position.sizes(), "add_relative_shift: content ", content.sizes(),
               " and position ", position.sizes(), " must have one shape");
  return AddRelativeShift::apply(content, position);
}

}  // namespace mixseq
