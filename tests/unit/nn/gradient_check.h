// Gradient check for the nn tests: analytic gradients (autograd) against central finite
// differences, in double precision.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/types.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace mixseq::test {

struct NamedTensor {
  std::string name;
  torch::Tensor tensor;  // double, requires_grad
};

// Compares d loss / d t from autograd with (loss(t + eps e_i) - loss(t - eps e_i)) / (2 eps)
// for every element of every tensor; `loss` must be a deterministic scalar function of them.
inline void expect_gradients_match_finite_differences(const std::function<torch::Tensor()>& loss,
                                                      const std::vector<NamedTensor>& inputs, double eps = 1e-6,
                                                      double tolerance = 1e-6) {
  for (const auto& input : inputs) {
    ASSERT_EQ(input.tensor.scalar_type(), at::kDouble) << input.name;
    if (input.tensor.grad().defined()) input.tensor.mutable_grad().zero_();
  }
  loss().backward();
  torch::NoGradGuard no_grad;
  for (const auto& input : inputs) {
    ASSERT_TRUE(input.tensor.grad().defined()) << input.name << " got no gradient";
    const auto analytic = input.tensor.grad().reshape(-1);
    auto values = input.tensor.view(-1);  // shares storage: writes change the input
    double worst = 0.0;
    for (int64_t i = 0; i < values.numel(); ++i) {
      const double original = values[i].item<double>();
      values[i] = original + eps;
      const double plus = loss().item<double>();
      values[i] = original - eps;
      const double minus = loss().item<double>();
      values[i] = original;
      const double numeric = (plus - minus) / (2 * eps);
      const double error = std::abs(numeric - analytic[i].item<double>()) / std::max(1.0, std::abs(numeric));
      worst = std::max(worst, error);
    }
    EXPECT_LT(worst, tolerance) << input.name;
    EXPECT_GT(analytic.abs().max().item<double>(), 0.0) << input.name << " has an all-zero gradient";
  }
}

}  // namespace mixseq::test
