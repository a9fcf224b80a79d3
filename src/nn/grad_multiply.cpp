#include "mixseq/nn/grad_multiply.h"

#include <torch/autograd.h>

namespace mixseq {
namespace {

class GradMultiply : public torch::autograd::Function<GradMultiply> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, double scale) {
    ctx->saved_data["scale"] = scale;
    return x.clone();
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return {grads[0] * ctx->saved_data["scale"].toDouble(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor grad_multiply(const torch::Tensor& x, double scale) {
  if (!x.requires_grad()) return x;
  return GradMultiply::apply(x, scale);
}

}  // namespace mixseq
