#include "mixseq/nn/quantizable_linear.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <tuple>

#include "mixseq/nn/cpu_float_linear.h"
#include "mixseq/util/error.h"
#include "mixseq/util/int8_engine.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {
namespace {

QuantizationGrid range_grid(double lo, double hi, int64_t bits, bool symmetric) {
  return make_quantization_grid(at::scalar_tensor(lo), at::scalar_tensor(hi), bits, symmetric);
}


// The parameters are LibTorch's Linear's, bit for bit. The fp32 output is at::linear's to fp32
// rounding where the product goes through oneDNN's sgemm (nn/cpu_float_linear.h), else bit for bit.
TEST(QuantizableLinear, FloatIsTorchLinear) {
  for (const bool with_bias : {true, false}) {
    const auto options = torch::nn::LinearOptions(6, 5).bias(with_bias);
    at::manual_seed(3);
    torch::nn::Linear reference(options);
    at::manual_seed(3);
    QuantizableLinear linear(options);
    ASSERT_EQ(linear->named_parameters().keys(), reference->named_parameters().keys());
    for (const auto& parameter : reference->named_parameters())
      EXPECT_TRUE(at::equal(linear->named_parameters()[parameter.key()], parameter.value())) << parameter.key();
    const auto x = at::randn({2, 3, 6});
    if (takes_cpu_float_linear(x, linear->weight, linear->bias)) {
      EXPECT_TRUE(at::allclose(linear(x), reference(x), 1e-6, 1e-6));
    } else {
      EXPECT_TRUE(at::equal(linear(x), reference(x)));
    }
  }
}

TEST(QuantizationGrid, RoundTripErrorIsAtMostHalfAStep) {
  at::manual_seed(4);
  const auto x = at::rand({1000}) * 7.0 - 3.0;  // in [-3, 4)
  for (const int64_t bits : {8, 16}) {
    for (const bool symmetric : {true, false}) {
      const auto grid = make_quantization_grid(x.min(), x.max(), bits, symmetric);
      const double step = grid.scale.item<double>();
      const double error = (quantize_dequantize(x, grid) - x).abs().max().item<double>();
      // Plus the fp32 rounding of values up to 4 (16-bit steps are only ~100 ulps wide there).
      EXPECT_LE(error, step / 2 + 4 * 4.0 * 1.2e-7) << bits << " bits, symmetric " << symmetric;
      EXPECT_GT(error, step / 4) << "a random input should need most of the half step";
    }
  }
}

TEST(QuantizationGrid, ClampsOutsideItsRange) {
  const auto grid = range_grid(-1.0, 1.0, 8, /*symmetric=*/true);
  const auto y = quantize_dequantize(at::tensor({-5.0f, 5.0f}), grid);
  EXPECT_TRUE(at::allclose(y, at::tensor({-1.0f, 1.0f})));
}

TEST(QuantizationGrid, PerChannelScalesAndAsymmetricZeroPointsAsComputedByHand) {
  // Rows with max |w| 1 and 2: symmetric 8-bit scales 1/127 and 2/127, zero points 0.
  const auto w = at::tensor({-1.0f, 0.5f, 2.0f, -0.25f}).view({2, 2});
  const auto symmetric = make_quantization_grid(std::get<0>(w.min(1)), std::get<0>(w.max(1)), 8, true);
  EXPECT_TRUE(at::allclose(symmetric.scale, at::tensor({1.0f / 127, 2.0f / 127})));
  EXPECT_TRUE(at::equal(symmetric.zero_point, at::zeros({2}, at::kLong)));
  EXPECT_EQ(symmetric.qmin, -127);
  EXPECT_EQ(symmetric.qmax, 127);
  // Row 0 quantized on its own scale: 0.5 / (1/127) = 63.5 rounds to even, 64.
  const auto qdq = quantize_dequantize(w, symmetric);
  EXPECT_FLOAT_EQ(qdq[0][1].item<float>(), 64.0f / 127);
  EXPECT_FLOAT_EQ(qdq[1][1].item<float>(), -16.0f * 2 / 127);  // -0.25 / (2/127) = -15.875 -> -16

  // [-1, 3], 8 bits: scale 4/255, zero point round(1 / (4/255)) = round(63.75) = 64.
  const auto asymmetric = range_grid(-1.0, 3.0, 8, false);
  EXPECT_FLOAT_EQ(asymmetric.scale.item<float>(), 4.0f / 255);
  EXPECT_EQ(asymmetric.zero_point.item<int64_t>(), 64);
  EXPECT_EQ(asymmetric.qmin, 0);
  EXPECT_EQ(asymmetric.qmax, 255);
  // [0.5, 2] stretches to [0, 2] so that 0 stays exact: scale 2/255, zero point 0.
  const auto positive = range_grid(0.5, 2.0, 8, false);
  EXPECT_FLOAT_EQ(positive.scale.item<float>(), 2.0f / 255);
  EXPECT_EQ(positive.zero_point.item<int64_t>(), 0);
  EXPECT_EQ(quantize_dequantize(at::zeros({1}), asymmetric).item<float>(), 0.0f);
}

struct LinearCase {
  bool per_channel;
  bool symmetric_activations;
};

class QuantizedLinearGrid : public ::testing::TestWithParam<LinearCase> {};

LinearQuantization calibrated(QuantizableLinear& linear, const torch::Tensor& x, const LinearCase& c,
                              LinearPrecision precision) {
  torch::NoGradGuard no_grad;
  const auto y = linear(x);
  const auto& w = linear->weight;
  LinearQuantization q;
  q.precision = precision;
  q.weight = c.per_channel ? make_quantization_grid(std::get<0>(w.min(1)), std::get<0>(w.max(1)), 8, true)
                           : make_quantization_grid(w.min(), w.max(), 8, true);
  q.input = make_quantization_grid(x.min(), x.max(), 8, c.symmetric_activations);
  q.output = make_quantization_grid(y.min(), y.max(), 8, c.symmetric_activations);
  return q;
}

TEST_P(QuantizedLinearGrid, SimulatedIsCloseToFloatAndInt8EqualsSimulatedWithinOneStep) {
  const auto c = GetParam();
  at::manual_seed(5);
  QuantizableLinear linear(torch::nn::LinearOptions(64, 48));
  const auto x = at::randn({3, 7, 64}) + 0.5;
  torch::NoGradGuard no_grad;
  const auto reference = linear(x);  // [3, 7, 48]

  linear->set_quantization(calibrated(linear, x, c, LinearPrecision::kSimulated));
  const auto simulated = linear(x);
  const double out_step = linear->quantization().output.scale.item<double>();
  // 8-bit inputs and weights over 64 products: a few output steps at most, not more.
  EXPECT_LT((simulated - reference).abs().max().item<double>(), 4 * out_step);
  EXPECT_GT((simulated - reference).abs().max().item<double>(), 0.0) << "the simulation must round";

  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  linear->set_quantization(calibrated(linear, x, c, LinearPrecision::kInt8));
  const auto int8 = linear(x);
  ASSERT_EQ(int8.sizes(), reference.sizes());
  EXPECT_LE((int8 - simulated).abs().max().item<double>(), out_step * (1 + 1e-4));
  // Its codes, as a decoder keeps keys and values, are the same result bit for bit.
  const auto [codes, grid] = linear->forward_codes(x);
  ASSERT_EQ(codes.scalar_type(), at::kByte);
  EXPECT_TRUE(at::equal(dequantize_codes(codes, grid), int8));
  EXPECT_FLOAT_EQ(grid.scale, static_cast<float>(out_step));
}

INSTANTIATE_TEST_SUITE_P(Grids, QuantizedLinearGrid,
                         ::testing::Values(LinearCase{false, true}, LinearCase{true, true}, LinearCase{false, false},
                                           LinearCase{true, false}));

TEST(QuantizableLinear, Int8RejectsAnAsymmetricWeightGridWithTheFix) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  QuantizableLinear linear(torch::nn::LinearOptions(4, 3));
  LinearQuantization q;
  q.precision = LinearPrecision::kInt8;
  q.weight = make_quantization_grid(linear->weight.min(), linear->weight.max(), 8, /*symmetric=*/false);
  q.input = q.output = range_grid(-1, 1, 8, true);
  try {
    linear->set_quantization(q);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weight_symmetric: true"), std::string::npos) << e.what();
  }
}

TEST(QuantizableLinear, ForwardCodesNeedsAnInt8Layer) {
  QuantizableLinear linear(torch::nn::LinearOptions(4, 3));
  EXPECT_FALSE(linear->runs_int8());
  EXPECT_THROW(linear->forward_codes(at::randn({2, 4})), Error);
}

// On two threads a bf16 product of 300 rows goes through rows padded to 320 (oneDNN's split of
// some row counts between threads, src/nn/quantizable_linear.cpp): the same values and gradients
// as one thread's unpadded product, within bf16's rounding.
TEST(QuantizableLinear, Bf16OnTwoThreadsGivesOneThreadsValuesAndGradients) {
  at::manual_seed(8);
  QuantizableLinear linear(torch::nn::LinearOptions(64, 48));
  const auto x = at::randn({3, 100, 64});
  const auto run = [&](int threads) {
    const int before = at::get_num_threads();
    at::set_num_threads(threads);
    linear->zero_grad();
    auto input = x.clone().requires_grad_();
    torch::Tensor y;
    {
      AutocastScope autocast(Precision::kBf16, torch::Device(torch::kCPU));
      y = linear(input);
    }
    (y.to(at::kFloat) * at::linspace(-1, 1, 48)).sum().backward();
    at::set_num_threads(before);
    return std::make_tuple(y.to(at::kFloat), input.grad(), linear->weight.grad().clone(), linear->bias.grad().clone());
  };
  const auto [y1, gx1, gw1, gb1] = run(1);
  const auto [y2, gx2, gw2, gb2] = run(2);
  ASSERT_EQ(y2.sizes(), y1.sizes());
  EXPECT_TRUE(at::allclose(y2, y1, 1e-2, 1e-2)) << (y2 - y1).abs().max();
  EXPECT_TRUE(at::allclose(gx2, gx1, 1e-2, 1e-2)) << (gx2 - gx1).abs().max();
  EXPECT_TRUE(at::allclose(gw2, gw1, 2e-2, 2e-2)) << (gw2 - gw1).abs().max();
  EXPECT_TRUE(at::allclose(gb2, gb1, 1e-4, 1e-4)) << (gb2 - gb1).abs().max();
}

TEST(QuantizableLinear, ObserverSeesInputAndOutput) {
  QuantizableLinear linear(torch::nn::LinearOptions(4, 3));
  torch::Tensor seen_in, seen_out;
  linear->set_observer([&](const torch::Tensor& in, const torch::Tensor& out) { seen_in = in, seen_out = out; });
  const auto x = at::randn({2, 4});
  const auto y = linear(x);
  EXPECT_TRUE(at::equal(seen_in, x));
  EXPECT_TRUE(at::equal(seen_out, y));
}

// forward_relu is relu(forward) on every precision; an observer sees the product before the ReLU
// (the grids it calibrates are the product's), and the float path fuses the two.
TEST(QuantizableLinear, ForwardReluIsReluOfForward) {
  at::manual_seed(4);
  QuantizableLinear linear(torch::nn::LinearOptions(8, 6));
  const auto x = at::randn({5, 8});
  const auto y = linear->forward_relu(x);
  EXPECT_TRUE(at::allclose(y, at::relu(linear(x)), 1e-6, 1e-6));
  EXPECT_GT((y == 0).sum().item<int64_t>(), 0);
  torch::Tensor seen_out;
  linear->set_observer([&](const torch::Tensor&, const torch::Tensor& out) { seen_out = out; });
  const auto observed = linear->forward_relu(x);
  ASSERT_TRUE(seen_out.defined());
  EXPECT_LT(seen_out.min().item<float>(), 0.0f);  // before the ReLU
  EXPECT_TRUE(at::equal(observed, at::relu(seen_out)));
  linear->set_observer(nullptr);
  linear->set_quantization({LinearPrecision::kSimulated, range_grid(-0.5, 0.5, 8, true), range_grid(-4, 4, 8, false),
                            range_grid(-4, 4, 8, false)});
  EXPECT_TRUE(at::equal(linear->forward_relu(x), at::relu(linear(x))));
}

}  // namespace
}  // namespace mixseq
