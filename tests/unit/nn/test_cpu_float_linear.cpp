#include "mixseq/nn/cpu_float_linear.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/nn/linear_product.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {
namespace {

struct Pass {
  at::Tensor y, grad_x, grad_weight, grad_bias;
};

using Linear = std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>;

// y = linear(x, weight(w), bias), then the gradients for the upstream gradient g. `weight` makes
// the layer's weight from the leaf w (a view or a transpose, as the models pass them).
Pass run(const Linear& linear, const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, const at::Tensor& g,
         const std::function<at::Tensor(const at::Tensor&)>& weight) {
  auto input = x.detach().clone().requires_grad_();
  auto leaf = w.detach().clone().requires_grad_();
  auto b = bias.defined() ? bias.detach().clone().requires_grad_() : bias;
  auto y = linear(input, weight(leaf), b);
  y.backward(g);
  return {y, input.grad(), leaf.grad(), b.defined() ? b.grad() : b};
}

// Largest error against the fp64 value, relative to the fp64 value's largest magnitude.
double relative_error(const at::Tensor& actual, const at::Tensor& exact) {
  return (actual.to(at::kDouble) - exact).abs().max().item<double>() / exact.abs().max().item<double>();
}

bool sgemm_is_called() {
  if (!float_matmul_is_direct()) {
    std::cerr << "oneDNN's sgemm is not called directly in this process: cpu_float_linear is at::linear here\n";
    return false;
  }
  return true;
}

TEST(CpuFloatLinear, ValuesAndGradientsAreTheFp64OnesToFp32Rounding) {
  if (!sgemm_is_called()) GTEST_SKIP() << "oneDNN's sgemm is not called directly in this process";
  const auto same = [](const at::Tensor& w) { return w; };
  const auto rows_of = [](const at::Tensor& w) { return w.narrow(0, 2, 24); };  // rows apart, as TXL's k and v rows
  const auto transposed = [](const at::Tensor& w) { return w.t(); };            // as the adaptive softmax's projections
  struct Case {
    std::string name;
    std::vector<int64_t> x_shape;
    int64_t weight_rows, weight_columns;
    std::function<at::Tensor(const at::Tensor&)> weight;
    bool bias;
  };
  const Case cases[] = {
      {"2-D with bias", {992, 64}, 96, 64, same, true},
      {"3-D without bias", {4, 7, 64}, 40, 64, same, false},
      {"rows of a larger weight", {33, 64}, 30, 64, rows_of, true},
      {"a transposed weight", {50, 40}, 40, 72, transposed, false},
      {"one row", {1, 64}, 128, 64, same, true},
  };
  for (const auto& c : cases) {
    at::manual_seed(11);
    const auto x = at::randn(c.x_shape);
    const auto w = at::randn({c.weight_rows, c.weight_columns}) * 0.1;
    const int64_t out = c.weight(w).size(0);
    const auto bias = c.bias ? at::randn({out}) : at::Tensor();
    auto out_shape = x.sizes().vec();
    out_shape.back() = out;
    const auto g = at::randn(out_shape);
    const auto ours = run(cpu_float_linear, x, w, bias, g, c.weight);
    const auto exact = run([](const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) { return at::linear(a, b, c); },
                           x.to(at::kDouble), w.to(at::kDouble), c.bias ? bias.to(at::kDouble) : bias,
                           g.to(at::kDouble), c.weight);
    const auto torch_fp32 = run([](const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) { return at::linear(a, b, c); },
                                x, w, bias, g, c.weight);
    EXPECT_EQ(ours.y.sizes(), torch_fp32.y.sizes()) << c.name;
    EXPECT_EQ(ours.y.scalar_type(), at::kFloat) << c.name;
    // fp32 sums of up to 992 terms: a few 1e-7 relative. A wrong operand or a missing term is O(1).
    for (const auto& [what, actual, expected] :
         {std::tuple{"y", ours.y, exact.y}, std::tuple{"grad x", ours.grad_x, exact.grad_x},
          std::tuple{"grad weight", ours.grad_weight, exact.grad_weight}}) {
      EXPECT_LT(relative_error(actual, expected), 2e-6) << c.name << ": " << what;
    }
    if (c.bias) {
      EXPECT_LT(relative_error(ours.grad_bias, exact.grad_bias), 2e-6) << c.name;
    }
    // And as close to LibTorch's fp32 at::linear as LibTorch's own is to the fp64 one.
    EXPECT_LT(relative_error(ours.y, exact.y), 4 * relative_error(torch_fp32.y, exact.y) + 1e-6) << c.name;
  }
}

TEST(CpuFloatLinearRelu, ValuesAndGradientsAreTheFp64OnesOfReluOfTheProduct) {
  if (!sgemm_is_called()) GTEST_SKIP() << "oneDNN's sgemm is not called directly in this process";
  const auto same = [](const at::Tensor& w) { return w; };
  const auto relu_of_linear = [](const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
    return at::relu(at::linear(a, b, c));
  };
  for (const bool with_bias : {true, false}) {
    at::manual_seed(14);
    const auto x = at::randn({3, 331, 64});  // rows not a multiple of the tasks' grain
    const auto w = at::randn({96, 64}) * 0.1;
    const auto bias = with_bias ? at::randn({96}) : at::Tensor();
    const auto g = at::randn({3, 331, 96});
    const auto ours = run(cpu_float_linear_relu, x, w, bias, g, same);
    const auto exact = run(relu_of_linear, x.to(at::kDouble), w.to(at::kDouble),
                           with_bias ? bias.to(at::kDouble) : bias, g.to(at::kDouble), same);
    const std::string name = with_bias ? "with bias" : "without bias";
    ASSERT_EQ(ours.y.sizes(), exact.y.sizes()) << name;
    // About half the outputs are 0: the ReLU ran, and its gradient is masked where they are.
    const double zeros = (ours.y == 0).to(at::kDouble).mean().item<double>();
    EXPECT_GT(zeros, 0.3) << name;
    EXPECT_LT(zeros, 0.7) << name;
    for (const auto& [what, actual, expected] :
         {std::tuple{"y", ours.y, exact.y}, std::tuple{"grad x", ours.grad_x, exact.grad_x},
          std::tuple{"grad weight", ours.grad_weight, exact.grad_weight}}) {
      EXPECT_LT(relative_error(actual, expected), 2e-6) << name << ": " << what;
    }
    if (with_bias) {
      EXPECT_LT(relative_error(ours.grad_bias, exact.grad_bias), 2e-6) << name;
    }
    // The mask is the output's: where y is 0 no gradient passes (an output on the other side of 0
    // than fp64's, within rounding, would show up as an O(1) error above).
    EXPECT_TRUE(at::equal(ours.y == 0, at::relu(cpu_float_linear(x, w, bias)) == 0)) << name;
  }
}

TEST(CpuFloatLinearRelu, KeepsNaNAsReluDoes) {
  if (!sgemm_is_called()) GTEST_SKIP() << "oneDNN's sgemm is not called directly in this process";
  auto x = at::randn({4, 8});
  x[2][3] = std::numeric_limits<float>::quiet_NaN();
  const auto w = at::randn({5, 8}), b = at::randn({5});
  const auto y = cpu_float_linear_relu(x, w, b);
  EXPECT_TRUE(at::equal(at::isnan(y), at::isnan(at::relu(at::linear(x, w, b)))));
  EXPECT_TRUE(at::isnan(y[2]).all().item<bool>());
}

TEST(LinearReluProduct, IsReluOfLinearProductOnEveryPath) {
  at::manual_seed(15);
  const auto x = at::randn({6, 8}), w = at::randn({3, 8}), b = at::randn({3});
  // fp64: at::linear then at::relu, bit for bit.
  EXPECT_TRUE(at::equal(linear_relu_product(x.to(at::kDouble), w.to(at::kDouble), b.to(at::kDouble)),
                        at::relu(at::linear(x.to(at::kDouble), w.to(at::kDouble), b.to(at::kDouble)))));
  EXPECT_TRUE(at::allclose(linear_relu_product(x, w, b), at::relu(at::linear(x, w, b)), 1e-5, 1e-5));
  // Under bf16 autocast: autocast's product, then the ReLU, bit for bit.
  AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
  const auto low = linear_relu_product(x, w, b);
  EXPECT_EQ(low.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(low, at::relu(at::linear(x, w, b))));
}

TEST(CpuFloatLinear, GradientsOnlyWhereAsked) {
  if (!sgemm_is_called()) GTEST_SKIP() << "oneDNN's sgemm is not called directly in this process";
  at::manual_seed(12);
  const auto x = at::randn({8, 16});                       // no gradient: a frozen input
  const auto w = at::randn({4, 16}).requires_grad_();
  const auto y = cpu_float_linear(x, w, at::Tensor());
  y.sum().backward();
  EXPECT_TRUE(at::allclose(w.grad(), x.sum(0).expand({4, 16}), 1e-5, 1e-5));  // d sum(x Wᵀ) / dW = column sums of x
  EXPECT_FALSE(x.grad().defined());
}

TEST(CpuFloatLinear, TakesOnlyFp32WithoutAutocast) {
  const auto x = at::randn({3, 4}), w = at::randn({5, 4}), b = at::randn({5});
  EXPECT_EQ(takes_cpu_float_linear(x, w, b), float_matmul_is_direct());
  EXPECT_FALSE(takes_cpu_float_linear(x.to(at::kDouble), w.to(at::kDouble), b.to(at::kDouble)));
  EXPECT_FALSE(takes_cpu_float_linear(x, w, b.to(at::kDouble)));
  AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
  EXPECT_FALSE(takes_cpu_float_linear(x, w, b));
}

TEST(LinearProduct, PicksThePathByDtype) {
  at::manual_seed(13);
  const auto x = at::randn({6, 8}), w = at::randn({3, 8}), b = at::randn({3});
  // fp64 is at::linear's, bit for bit.
  EXPECT_TRUE(at::equal(linear_product(x.to(at::kDouble), w.to(at::kDouble), b.to(at::kDouble)),
                        at::linear(x.to(at::kDouble), w.to(at::kDouble), b.to(at::kDouble))));
  // fp32: at::linear's values to fp32 rounding.
  const auto y = linear_product(x, w, b);
  EXPECT_EQ(y.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(y, at::linear(x, w, b), 1e-5, 1e-5));
  // Under bf16 autocast: bf16, autocast's own values (nn/cpu_bf16_linear.h).
  AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
  const auto low = linear_product(x, w, b);
  EXPECT_EQ(low.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(low, at::linear(x, w, b)));
}

TEST(TransposedWeight, IsTheLinearProductAndFollowsEveryChangeOfTheWeight) {
  at::manual_seed(14);
  auto weight = at::randn({37, 24}).requires_grad_();  // a parameter, as the models hold them
  const auto x = at::randn({3, 5, 24});
  TransposedWeight layer;
  const auto product = [&](const at::Tensor& w) {
    const at::NoGradGuard no_grad;
    return layer.linear(x, w);
  };
  const auto expect_linear = [&](const at::Tensor& w, const char* after) {
    const auto y = product(w);
    ASSERT_EQ(y.sizes(), (std::vector<int64_t>{3, 5, 37})) << after;
    EXPECT_TRUE(at::allclose(y, at::linear(x, w.detach()), 1e-5, 1e-5)) << after;
  };
  expect_linear(weight, "the first product");
  expect_linear(weight, "the kept copy");
  {
    const at::NoGradGuard no_grad;
    weight.mul_(-2.0);  // an optimizer step: in place, the version counter moves
  }
  expect_linear(weight, "an in-place change");
  {
    const at::NoGradGuard no_grad;
    weight.set_data(at::randn({37, 24}));  // a checkpoint loaded into the parameter: new storage
  }
  expect_linear(weight, "new data");
  expect_linear(at::randn({37, 24}), "another tensor");
  expect_linear(weight.t().contiguous().t(), "a transposed view");
  // A copy of the holder starts empty and still gives the product.
  TransposedWeight copied(layer);
  {
    const at::NoGradGuard no_grad;
    EXPECT_TRUE(at::allclose(copied.linear(x, weight), at::linear(x, weight.detach()), 1e-5, 1e-5));
  }
  // Where a gradient is recorded it is float_linear_or_aten's, differentiable in both.
  const auto input = x.clone().requires_grad_();
  layer.linear(input, weight).sum().backward();
  const auto grad_x = input.grad().clone(), grad_w = weight.grad().clone();
  input.grad().zero_(), weight.grad().zero_();
  at::linear(input, weight).sum().backward();
  EXPECT_TRUE(at::allclose(grad_x, input.grad(), 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(grad_w, weight.grad(), 1e-5, 1e-5));
  // Other dtypes are float_linear_or_aten's too.
  {
    const at::NoGradGuard no_grad;
    const auto y64 = layer.linear(x.to(at::kDouble), weight.to(at::kDouble));
    EXPECT_TRUE(at::equal(y64, at::linear(x.to(at::kDouble), weight.to(at::kDouble))));
  }
}

// The products nn/linear_product.h's overloads take from a kept copy: bias, ReLU and a scaled
// weight, on a fresh view of the same rows at every call (as the attention narrows its weight);
// where a gradient is recorded or autocast runs, linear_product's own values.
TEST(TransposedWeight, KeepsBiasReluAndScaledRowsOfAView) {
  at::manual_seed(15);
  auto weight = at::randn({40, 24}).requires_grad_();  // a parameter: rows 0-15 and 16-39 used apart
  const auto bias = at::randn({24}).requires_grad_();
  const auto x = at::randn({2, 7, 24});
  TransposedWeight query, rest;
  const double scale = 1.0 / std::sqrt(8.0);
  const auto expected_query = [&] { return at::linear(x, weight.detach().narrow(0, 0, 16) * scale); };
  const auto expected_rest = [&] {
    return at::relu(at::linear(x, weight.detach().narrow(0, 16, 24), bias.detach()));
  };
  const auto products = [&](const char* after) {
    const at::NoGradGuard no_grad;
    if (!TransposedWeight::applies(x, weight, bias)) GTEST_SKIP() << "oneDNN's sgemm is not called directly here";
    const auto q = linear_product(x, weight.narrow(0, 0, 16), {}, query, scale);  // a new view each call
    const auto r = linear_relu_product(x, weight.narrow(0, 16, 24), bias, rest);
    ASSERT_EQ(q.sizes(), (std::vector<int64_t>{2, 7, 16})) << after;
    EXPECT_TRUE(at::allclose(q, expected_query(), 1e-5, 1e-5)) << after;
    EXPECT_TRUE(at::allclose(r, expected_rest(), 1e-5, 1e-5)) << after;
    EXPECT_TRUE((r >= 0).all().item<bool>()) << after;
  };
  products("the first products");
  products("the kept copies, through new views");
  {
    const at::NoGradGuard no_grad;
    weight.narrow(0, 0, 16).mul_(3.0);  // written through another view: the shared version counter moves
  }
  products("a write through another view");
  {
    const at::NoGradGuard no_grad;
    const auto q = linear_product(x, weight.narrow(0, 0, 16), {}, query, 2.0 * scale);  // another scale
    EXPECT_TRUE(at::allclose(q, 2.0 * expected_query(), 1e-5, 1e-5));
    // The same rows' offsets, other rows: a view one row further down is another matrix.
    const auto shifted = linear_product(x, weight.narrow(0, 1, 16), {}, query, scale);
    EXPECT_TRUE(at::allclose(shifted, at::linear(x, weight.detach().narrow(0, 1, 16) * scale), 1e-5, 1e-5));
  }
  // Recorded: linear_product's values and gradients, of the scaled rows.
  const auto input = x.clone().requires_grad_();
  linear_product(input, weight.narrow(0, 0, 16), {}, query, scale).sum().backward();
  const auto grad_x = input.grad().clone(), grad_w = weight.grad().clone();
  input.grad().zero_(), weight.grad().zero_();
  at::linear(input, weight.narrow(0, 0, 16) * scale).sum().backward();
  EXPECT_TRUE(at::allclose(grad_x, input.grad(), 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(grad_w, weight.grad(), 1e-5, 1e-5));
  // Under bf16 autocast: linear_product's bf16 path, as without a kept copy.
  AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
  const at::NoGradGuard no_grad;
  const auto low = linear_relu_product(x, weight.narrow(0, 16, 24), bias, rest);
  EXPECT_EQ(low.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(low, linear_relu_product(x, weight.narrow(0, 16, 24), bias)));
}

}  // namespace
}  // namespace mixseq
