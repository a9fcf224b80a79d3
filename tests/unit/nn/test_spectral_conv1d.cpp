// nn/spectral_conv1d.h against at::conv1d computed in double precision: kernels of 2 to 29 taps,
// dilations 1 and 2, "same" and other paddings, lengths that leave a partial last segment and
// inputs shorter than one segment; the folded scale and bias; the cost model's choices; an
// utterance's output alone and in a batch beside a longer one.
#include "mixseq/nn/spectral_conv1d.h"

#include "mixseq/nn/batched_matmul.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/utils.h>

#include <tuple>
#include <vector>

namespace mixseq {
namespace {

// max |a - b| / max |b|
double relative_error(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b).abs().max().item<double>() / b.abs().max().item<double>();
}

TEST(SpectralConv1d, MatchesDirectConvolution) {
  at::manual_seed(3);
  // taps, dilation, padding, input frames, FFT size
  const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>> cases = {
      {11, 1, 5, 200, 32},  {11, 1, 5, 200, 64},  {25, 1, 12, 200, 64}, {25, 1, 12, 37, 64},
      {29, 2, 28, 200, 128}, {29, 2, 28, 9, 128}, {13, 1, 0, 50, 32},   {2, 1, 1, 7, 8},
      {5, 3, 4, 101, 16},   {17, 1, 8, 1, 64},
  };
  for (const auto& [taps, dilation, padding, frames, fft_size] : cases) {
    const int64_t batch = 3, in = 7, out = 5;
    const auto x = at::randn({batch, in, frames});
    const auto w = at::randn({out, in, taps});
    const auto expected = at::conv1d(x.to(at::kDouble), w.to(at::kDouble), {}, 1, padding, dilation);
    const auto plan = plan_spectral_conv1d(w, dilation, padding, fft_size);
    const auto y = spectral_conv1d(x, plan);
    ASSERT_EQ(y.sizes(), expected.sizes()) << taps << " " << dilation << " " << padding << " " << frames;
    EXPECT_LT(relative_error(y, expected), 2e-6) << taps << " " << dilation << " " << padding << " " << frames << " "
                                                  << fft_size;
  }
}

TEST(SpectralConv1d, FoldsScaleAndBiasAsABatchNormWould) {
  at::manual_seed(4);
  const auto x = at::randn({2, 16, 90});
  const auto w = at::randn({24, 16, 21});
  const auto scale = at::rand({24}) + 0.5, bias = at::randn({24});
  const auto direct = at::conv1d(x.to(at::kDouble), w.to(at::kDouble), {}, 1, 10, 1) *
                          scale.to(at::kDouble).view({1, 24, 1}) +
                      bias.to(at::kDouble).view({1, 24, 1});
  const auto y = spectral_conv1d(x, plan_spectral_conv1d(w, 1, 10, 64, scale, bias));
  EXPECT_LT(relative_error(y, direct), 2e-6);
  // A batch norm in inference mode, folded as the models fold it.
  auto norm = torch::nn::BatchNorm1d(torch::nn::BatchNormOptions(24).eps(1e-3));
  norm->running_mean.copy_(at::randn({24}));
  norm->running_var.copy_(at::rand({24}) + 0.1);
  norm->weight.data().copy_(at::randn({24}));
  norm->bias.data().copy_(at::randn({24}));
  norm->eval();
  torch::NoGradGuard no_grad;
  const auto expected = norm->forward(at::conv1d(x, w, {}, 1, 10, 1));
  const auto s = norm->weight / at::sqrt(norm->running_var + 1e-3);
  const auto folded = spectral_conv1d(x, plan_spectral_conv1d(w, 1, 10, 64, s, norm->bias - norm->running_mean * s));
  EXPECT_LT((folded - expected).abs().max().item().toDouble() / expected.abs().max().item().toDouble(), 1e-5);
}

// Whether the products underneath (nn/batched_matmul.h, as spectral_conv1d calls it) give a row
// the same bits whatever the rows multiplied with it: rows 0..m-1 of a 40-row product against the
// m-row products of the same rows. OpenBLAS 0.3.21's SkylakeX and Cooperlake kernels do; its
// Haswell, Zen and Prescott ones round the rows of a tail block otherwise (measured with
// OPENBLAS_CORETYPE on an Intel model 207 through cblas_sgemm: 100 to 183 of 199 row counts
// differed from the same rows of a 512-row product in the last bit).
bool rows_round_alike_whatever_the_rows_beside_them() {
  at::manual_seed(7);
  const auto a = at::randn({1, 1, 40, 24});
  const auto b = at::randn({1, 1, 24, 32});
  const auto all = batched_matmul(a, b);
  for (int64_t m = 1; m < 40; ++m)
    if (!at::equal(batched_matmul(a.narrow(2, 0, m), b), all.narrow(2, 0, m))) return false;
  return true;
}

// Segments start at the same frames whatever the batch: an utterance alone gives the same bits as
// in a batch beside a longer one whose extra frames are zero (as the models' masks make them),
// wherever the products underneath round a row alike whatever the rows beside it (elsewhere the
// two differ in the last bits: an AVX2 CPU's OpenBLAS kernels).
TEST(SpectralConv1d, AnUtterancesOutputDoesNotDependOnItsBatch) {
  if (!rows_round_alike_whatever_the_rows_beside_them())
    GTEST_SKIP() << "this BLAS rounds a row of a product differently with the rows beside it, so an utterance's "
                    "output may differ with its batch in the last bits";
  at::manual_seed(6);
  const auto w = at::randn({32, 24, 25});
  const auto plan = plan_spectral_conv1d(w, 1, 12, 64);
  const auto alone = at::randn({1, 24, 90});
  auto batch = at::zeros({5, 24, 170});
  batch.narrow(0, 3, 1).narrow(2, 0, 90).copy_(alone);
  batch.narrow(0, 0, 3).copy_(at::randn({3, 24, 170}));
  const auto in_batch = spectral_conv1d(batch, plan).narrow(0, 3, 1).narrow(2, 0, 90);
  EXPECT_TRUE(at::equal(spectral_conv1d(alone, plan), in_batch));
}

TEST(SpectralConv1d, RejectsWhatItCannotCompute) {
  const auto w = at::randn({4, 3, 9});
  EXPECT_THROW(plan_spectral_conv1d(w, 1, 4, 8), std::exception);   // N must exceed the span
  EXPECT_THROW(plan_spectral_conv1d(w, 1, 4, 48), std::exception);  // and be a power of two
  const auto plan = plan_spectral_conv1d(w, 1, 0, 16);
  EXPECT_THROW(spectral_conv1d(at::randn({1, 3, 8}), plan), std::exception);  // shorter than the kernel
  EXPECT_THROW(spectral_conv1d(at::randn({1, 5, 30}), plan), std::exception);  // other channels
  EXPECT_THROW(spectral_conv1d(at::randn({1, 3, 30}, at::kDouble), plan), std::exception);
}

TEST(SpectralConv1d, CostModelKeepsShortKernelsDirect) {
  // Jasper's widths; the estimate's reference load is its bench shape, 8 x 200 frames
  EXPECT_EQ(spectral_conv1d_fft_size(1, 1, 256, 256), 0);  // 1x1: a GEMM
  EXPECT_EQ(spectral_conv1d_fft_size(3, 3, 256, 256), 0);
  EXPECT_EQ(spectral_conv1d_fft_size(5, 5, 256, 256), 0);
  for (const int64_t taps : {11, 13, 17, 21, 25}) {
    const int64_t n = spectral_conv1d_fft_size(taps, taps, 256, 256);
    EXPECT_GT(n, taps) << taps;
    EXPECT_LE(n, 128) << taps;
    EXPECT_EQ(n & (n - 1), 0) << taps;
  }
  EXPECT_GT(spectral_conv1d_fft_size(29, 57, 256, 256), 57);  // the dilated epilogue
  EXPECT_EQ(spectral_conv1d_fft_size(7, 7, 64, 64), 0);     // narrow layers: the FFTs dominate
  EXPECT_GT(spectral_conv1d_fft_size(25, 25, 64, 64), 0);
}

}  // namespace
}  // namespace mixseq
