// nn/spectral_conv2d.h against at::conv2d in double precision: DeepSpeech2's second convolution
// (stride 2 along frequency, whose kept rows' inverse is folded) at a small width, other strides,
// stride 1, widths that leave a partial segment, and
// the folded scale and bias; what it refuses.
#include "mixseq/nn/spectral_conv2d.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace mixseq {
namespace {

TEST(SpectralConv2d, MatchesDirectConvolution) {
  at::manual_seed(9);
  // KH, KW, H, W, stride along H, FFT width
  const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>> cases = {
      {21, 11, 61, 60, 2, 64}, {21, 11, 61, 11, 2, 32}, {5, 3, 9, 40, 1, 8}, {3, 7, 8, 100, 1, 16}, {1, 1, 5, 7, 1, 2},
      {4, 3, 12, 30, 2, 8},  // stride 2, kept rows odd: the full inverse, every second row
      {7, 3, 16, 30, 3, 8},  // stride 3 folded: 16 rows (NH 16) is no multiple of 3 -> full inverse
      {5, 3, 16, 30, 2, 8},  // stride 2, kept rows even: the folded inverse
  };
  for (const auto& [kh, kw, h, w, stride, nw] : cases) {
    const auto x = at::randn({2, 3, h, w});
    const auto weight = at::randn({4, 3, kh, kw});
    const auto scale = at::rand({4}) + 0.5, bias = at::randn({4});
    const auto expected =
        at::conv2d(x.to(at::kDouble), weight.to(at::kDouble), {}, {stride, 1}) * scale.to(at::kDouble).view({1, 4, 1, 1}) +
        bias.to(at::kDouble).view({1, 4, 1, 1});
    const auto y = spectral_conv2d(x, plan_spectral_conv2d(weight, h, stride, nw, scale, bias));
    ASSERT_EQ(y.sizes(), expected.sizes()) << kh << "x" << kw << " " << h << "x" << w;
    const double error = (y.to(at::kDouble) - expected).abs().max().item<double>() / expected.abs().max().item<double>();
    EXPECT_LT(error, 2e-6) << kh << "x" << kw << " " << h << "x" << w << " stride " << stride;
  }
}

TEST(SpectralConv2d, RejectsWhatItCannotCompute) {
  const auto weight = at::randn({4, 3, 5, 5});
  EXPECT_THROW(plan_spectral_conv2d(weight, 4, 1, 8), std::exception);   // fewer rows than the kernel
  EXPECT_THROW(plan_spectral_conv2d(weight, 9, 1, 4), std::exception);   // FFT narrower than the kernel
  EXPECT_THROW(plan_spectral_conv2d(weight, 9, 1, 12), std::exception);  // not a power of two
  const auto plan = plan_spectral_conv2d(weight, 9, 1, 16);
  EXPECT_THROW(spectral_conv2d(at::randn({1, 3, 10, 20}), plan), std::exception);  // other height
  EXPECT_THROW(spectral_conv2d(at::randn({1, 3, 9, 4}), plan), std::exception);    // narrower than the kernel
  EXPECT_THROW(spectral_conv2d(at::randn({1, 2, 9, 20}), plan), std::exception);   // other channels
}

}  // namespace
}  // namespace mixseq
