// batched_matmul against at::matmul: operands read in place through their strides (the
// attention's permuted projections, transposed matrices), outputs in the asked memory order,
// gradients against finite differences, the fallback under autocast.
#include "mixseq/nn/batched_matmul.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <tuple>

#include "gradient_check.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

TEST(BatchedMatmul, EqualsMatmulOnStridedOperands) {
  at::manual_seed(1);
  const int64_t B = 3, T = 4, H = 2, Dh = 5, K = 6;
  const auto q = at::randn({B, T, H, Dh}).permute({2, 0, 1, 3});             // [H, B, T, Dh], rows H Dh apart
  const auto kv = at::randn({B, K, 2, H, Dh});
  const auto k = kv.select(2, 0).permute({2, 0, 3, 1});                       // [H, B, Dh, K], column-major
  const auto v = kv.select(2, 1).permute({2, 0, 1, 3});                       // [H, B, K, Dh]
  const auto scores = batched_matmul(q, k);                                   // [H, B, T, K]
  EXPECT_TRUE(scores.is_contiguous());
  EXPECT_TRUE(at::allclose(scores, at::matmul(q, k), 1e-5, 1e-6));
  const auto heads = batched_matmul(scores, v, {1, 2, 0, 3});                 // [H, B, T, Dh] stored [B, T, H, Dh]
  EXPECT_TRUE(heads.permute({1, 2, 0, 3}).is_contiguous());
  EXPECT_TRUE(at::allclose(heads, at::matmul(scores, v), 1e-5, 1e-6));
  // One matrix per head over all rows: [H, 1, B T, Dh] x [H, 1, Dh, K].
  const auto rows = at::randn({B * T, H, Dh}).permute({1, 0, 2}).unsqueeze(1);
  const auto r = at::randn({K, H, Dh}).permute({1, 2, 0}).unsqueeze(1);
  EXPECT_TRUE(at::allclose(batched_matmul(rows, r), at::matmul(rows, r), 1e-5, 1e-6));
  // Neither stride 1 (a copy first), single rows and columns, fp64.
  const auto odd = at::randn({2, 3, 8, 10}).slice(3, 0, 10, 2);               // [2, 3, 8, 5], strides .., 10, 2
  const auto other = at::randn({2, 3, 5, 1});
  EXPECT_TRUE(at::allclose(batched_matmul(odd, other), at::matmul(odd, other), 1e-5, 1e-6));
  const auto row = at::randn({2, 2, 1, 7}, at::kDouble), column = at::randn({2, 2, 7, 1}, at::kDouble);
  EXPECT_TRUE(at::allclose(batched_matmul(row, column), at::matmul(row, column), 1e-12, 1e-12));
  EXPECT_TRUE(at::allclose(batched_matmul(column, row), at::matmul(column, row), 1e-12, 1e-12));
}

// Matrices of 2^20 multiply-adds and more go to oneDNN's sgemm where the process calls it
// (smaller ones stay OpenBLAS's): the same values, in every transpose and for strided rows.
TEST(BatchedMatmul, LargeMatricesEqualMatmulInEveryLayout) {
  at::manual_seed(3);
  const int64_t H = 3, M = 300, K = 48, N = 80;  // M K N = 1.15M
  const auto rows = at::randn({M, H, K}).permute({1, 0, 2}).unsqueeze(1);    // [H, 1, M, K], rows H K apart
  const auto columns = at::randn({N, H, K}).permute({1, 2, 0}).unsqueeze(1); // [H, 1, K, N], transposed
  const auto plain = at::randn({H, 1, K, N});
  const auto stored_transposed = at::randn({H, 1, K, M}).transpose(2, 3);    // [H, 1, M, K], transposed
  for (const auto& [a, b, what] : {std::tuple{rows, columns, "strided rows x transposed"},
                                   std::tuple{rows, plain, "strided rows x plain"},
                                   std::tuple{stored_transposed, plain, "transposed x plain"},
                                   std::tuple{stored_transposed, columns, "transposed x transposed"}}) {
    const auto expected = at::matmul(a, b);
    EXPECT_TRUE(at::allclose(batched_matmul(a, b), expected, 1e-4, 1e-4)) << what;
    const auto stored = batched_matmul(a, b, {1, 2, 0, 3});                  // written as [1, M, H, N]
    EXPECT_TRUE(stored.permute({1, 2, 0, 3}).is_contiguous()) << what;
    EXPECT_TRUE(at::allclose(stored, expected, 1e-4, 1e-4)) << what;
  }
  // The gradients' products are as large: against at::matmul's.
  const auto x = rows.clone().requires_grad_(), y = plain.clone().requires_grad_();
  const auto weighting = at::randn({H, 1, M, N});
  (batched_matmul(x, y) * weighting).sum().backward();
  const auto x2 = rows.clone().requires_grad_(), y2 = plain.clone().requires_grad_();
  (at::matmul(x2, y2) * weighting).sum().backward();
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad(), 1e-4, 1e-3));
  EXPECT_TRUE(at::allclose(y.grad(), y2.grad(), 1e-4, 1e-3));
}

TEST(BatchedMatmul, TakesItsOwnPathForFp32AndFp64OnTheCpuWithoutAutocast) {
  const auto a = at::randn({1, 1, 2, 2}), b = at::randn({1, 1, 2, 2});
#ifdef MIXSEQ_TESTS_EXPECT_CBLAS
  EXPECT_TRUE(batched_matmul_in_place(a, b));
#endif
  EXPECT_FALSE(batched_matmul_in_place(a.to(at::kBFloat16), b.to(at::kBFloat16)));
  compat::set_autocast(c10::kCPU, true, at::kBFloat16);
  EXPECT_FALSE(batched_matmul_in_place(a, b));
  EXPECT_EQ(batched_matmul(a, b).scalar_type(), at::kBFloat16);  // at::matmul under autocast
  compat::set_autocast(c10::kCPU, false, at::kBFloat16);
  at::autocast::clear_cache();
}

TEST(BatchedMatmul, GradientsMatchFiniteDifferences) {
  at::manual_seed(2);
  const auto options = at::TensorOptions().dtype(at::kDouble);
  const auto x = at::randn({3, 4, 2, 5}, options).requires_grad_();  // read as [2, 3, 4, 5] through a permute
  const auto y = at::randn({2, 3, 6, 5}, options).requires_grad_();  // read transposed
  const auto weighting = at::randn({2, 3, 4, 6}, options);
  test::expect_gradients_match_finite_differences(
      [&] { return (batched_matmul(x.permute({2, 0, 1, 3}), y.transpose(2, 3), {1, 2, 0, 3}) * weighting).sum(); },
      {{"x", x}, {"y", y}});
}

}  // namespace
}  // namespace mixseq
