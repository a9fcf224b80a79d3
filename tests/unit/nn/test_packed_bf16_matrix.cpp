#include "mixseq/nn/packed_bf16_matrix.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// The bf16 operands' product summed exactly (fp64).
at::Tensor exact_bf16_product(const at::Tensor& a, const at::Tensor& b) {
  return at::mm(a.to(at::kDouble), b.to(at::kDouble));
}

TEST(PackedBf16Matrix, ProductsEqualTheExactSumsOfTheBf16Operands) {
  if (!PackedBf16Matrix::available()) GTEST_SKIP() << "this CPU (or process) cannot run AMX tiles";
  torch::manual_seed(11);
  // DeepSpeech2's step shapes both ways; rows below, at and above one tile (16), and column
  // blocks that are not a multiple of the kernel's four.
  for (const auto& [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{8, 256, 768}, {8, 768, 256}, {1, 32, 16},
                               {16, 64, 48}, {21, 96, 80}, {40, 32, 112}}) {
    const auto b = torch::randn({k, n}).to(at::kBFloat16);
    const PackedBf16Matrix packed(b);
    // a: every other row of a larger matrix (rows lie apart); c: a column slice (row stride n + 5)
    const auto a = torch::randn({2 * m, k}).to(at::kBFloat16).slice(0, 0, 2 * m, 2);
    auto storage = torch::full({m, n + 5}, 7.0f);
    auto c = storage.slice(1, 0, n);
    packed.multiply_into(a, c);
    const auto expected = exact_bf16_product(a, b);
    const double error = (c.to(at::kDouble) - expected).abs().max().item<double>();
    EXPECT_LT(error, 1e-5 * expected.abs().max().item<double>()) << m << " x " << k << " x " << n;
    EXPECT_TRUE(at::equal(storage.slice(1, n, n + 5), torch::full({m, 5}, 7.0f)));  // nothing past c written
  }
}

TEST(PackedBf16Matrix, AccumulatesIntoCAndSplitsLargeProductsAcrossThreads) {
  if (!PackedBf16Matrix::available()) GTEST_SKIP() << "this CPU (or process) cannot run AMX tiles";
  torch::manual_seed(12);
  // [64, 512] x [512, 2048]: 67 M multiply-adds, shared by LibTorch's threads (32 column groups);
  // c a step of a [B, T, 4H] tensor as the LSTM's gates are.
  const auto b = torch::randn({512, 2048}).to(at::kBFloat16);
  const PackedBf16Matrix packed(b);
  const auto a = torch::randn({64, 512}).to(at::kBFloat16);
  const auto gates = torch::randn({64, 3, 2048});
  auto c = gates.select(1, 1);
  const auto before = c.clone();
  packed.multiply_into(a, c, /*accumulate=*/true);
  const auto expected = before.to(at::kDouble) + exact_bf16_product(a, b);
  EXPECT_LT((c.to(at::kDouble) - expected).abs().max().item<double>(), 1e-5 * expected.abs().max().item<double>());
  EXPECT_TRUE(at::equal(gates.select(1, 0), gates.select(1, 0).clone()));
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  auto one = torch::empty({64, 2048});
  packed.multiply_into(a, one);
  at::set_num_threads(threads);
  auto many = torch::empty({64, 2048});
  packed.multiply_into(a, many);
  EXPECT_TRUE(at::equal(one, many));  // each column block's sums in the same order
}

TEST(PackedBf16Matrix, ATransposedViewPacksAsItsValues) {
  if (!PackedBf16Matrix::available()) GTEST_SKIP() << "this CPU (or process) cannot run AMX tiles";
  const auto w = torch::randn({768, 256}).to(at::kBFloat16);  // W_hh [3H, H]; the step multiplies by W_hhᵀ
  const PackedBf16Matrix packed(w.t());
  const auto a = torch::randn({8, 256}).to(at::kBFloat16);
  auto c = torch::empty({8, 768});
  packed.multiply_into(a, c);
  EXPECT_TRUE(at::allclose(c.to(at::kDouble), exact_bf16_product(a, w.t()), 1e-5, 1e-4));
}

TEST(PackedBf16Matrix, ShapesItCannotTakeAreErrors) {
  EXPECT_FALSE(PackedBf16Matrix::fits(30, 16));
  EXPECT_FALSE(PackedBf16Matrix::fits(32, 24));
  EXPECT_TRUE(PackedBf16Matrix::fits(800, 2400));  // DeepSpeech2's large preset, hidden 800
  EXPECT_THROW(PackedBf16Matrix(torch::randn({32, 16})), Error);  // fp32
  EXPECT_EQ(PackedBf16Matrix::where_possible(torch::randn({32, 16})).rows(), 0);  // fp32: the caller's product
  EXPECT_EQ(PackedBf16Matrix::where_possible(torch::randn({30, 16}).to(at::kBFloat16)).rows(), 0);
  if (!PackedBf16Matrix::available()) GTEST_SKIP() << "this CPU (or process) cannot run AMX tiles";
  EXPECT_EQ(PackedBf16Matrix::where_possible(torch::randn({32, 16}).to(at::kBFloat16)).rows(), 32);
  const PackedBf16Matrix packed(torch::randn({32, 16}).to(at::kBFloat16));
  auto c = torch::empty({2, 16});
  EXPECT_THROW(packed.multiply_into(torch::randn({2, 64}).to(at::kBFloat16), c), Error);  // K 64, not 32
  EXPECT_THROW(packed.multiply_into(torch::randn({2, 32}).to(at::kBFloat16).t().contiguous().t(), c), Error);
}

}  // namespace
}  // namespace mixseq
