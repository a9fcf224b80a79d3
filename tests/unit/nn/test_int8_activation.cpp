#include "mixseq/nn/int8_activation.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace mixseq {
namespace {

// The fast loops must be ATen's reference arithmetic bit for bit, rounding ties to even and
// clamping at both ends included; 70,000 elements also cross the parallel chunk size.
TEST(Int8Activation, QuantizeAndDequantizeAreAtensBitForBit) {
  at::manual_seed(5);
  const double scale = 0.05;
  const int64_t zero_point = 100;
  // Random values (some beyond both ends of the grid) and exact ties k.5 steps from the zero point.
  const auto ties = (at::arange(-20, 20, at::kFloat) + 0.5) * static_cast<float>(scale);
  const auto x = at::cat({at::randn({70000}) * 6.0, ties}).view({-1, 40});
  const auto fast = quantize_activation(x, scale, zero_point);
  const auto reference = at::quantize_per_tensor(x, scale, zero_point, at::kQUInt8);
  EXPECT_EQ(fast.sizes(), reference.sizes());
  EXPECT_EQ(fast.q_scale(), scale);
  EXPECT_EQ(fast.q_zero_point(), zero_point);
  EXPECT_TRUE(at::equal(fast.int_repr(), reference.int_repr()));
  EXPECT_EQ(fast.int_repr().min().item<int64_t>(), 0);    // clamped below
  EXPECT_EQ(fast.int_repr().max().item<int64_t>(), 255);  // and above
  EXPECT_TRUE(at::equal(dequantize_activation(reference), reference.dequantize()));
}

TEST(Int8Activation, RejectsWhatItCannotQuantize) {
  EXPECT_THROW(quantize_activation(at::zeros({2}, at::kDouble), 0.1, 0), std::exception);
  EXPECT_THROW(quantize_activation(at::zeros({2}), 0.1, 300), std::exception);
  EXPECT_THROW(dequantize_activation(at::zeros({2})), std::exception);
}

}  // namespace
}  // namespace mixseq
