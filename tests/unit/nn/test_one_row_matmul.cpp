// one_row_matmul against at::matmul and against sums written out: matrices whose rows or whose
// columns are contiguous, batch dimensions broadcast or expanded, sizes around the kernels' blocks
// of 64 and 16, a strided row; and the broadcast path with a gradient to keep.
#include "mixseq/nn/one_row_matmul.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <vector>

#include "thread_count.h"

namespace mixseq {
namespace {

// row [C, 1, K] @ matrix [C, K, N] written out in double, one output at a time.
at::Tensor written_out(const at::Tensor& row, const at::Tensor& matrix) {
  const auto r = row.to(at::kDouble).contiguous(), m = matrix.to(at::kDouble).contiguous();
  const int64_t C = r.size(0), K = r.size(2), N = m.size(2);
  auto out = at::zeros({C, 1, N}, at::kDouble);
  auto o = out.accessor<double, 3>();
  auto ra = r.accessor<double, 3>();
  auto ma = m.accessor<double, 3>();
  for (int64_t c = 0; c < C; ++c)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) o[c][0][n] += ra[c][0][k] * ma[c][k][n];
  return out;
}

TEST(OneRowMatmul, EqualsSumsWrittenOutAcrossBlockEdges) {
  at::manual_seed(3);
  torch::NoGradGuard no_grad;
  // N covers the 64-wide blocks, the 16-wide ones and the scalar tail; K = 1 and a long K.
  for (const int64_t N : {1, 5, 16, 17, 63, 64, 65, 100, 256}) {
    for (const int64_t K : {1, 7, 30}) {
      const auto row = at::randn({6, 1, K}), matrix = at::randn({6, K, N});
      const auto out = one_row_matmul(row, matrix);
      ASSERT_EQ(out.sizes(), (std::vector<int64_t>{6, 1, N}));
      EXPECT_TRUE(at::allclose(out.to(at::kDouble), written_out(row, matrix), 1e-5, 1e-5)) << "K " << K << " N " << N;
      // A matrix stored transposed ([N, K] rows): its columns contiguous, one dot product per output.
      const auto columns = at::randn({6, N, K}).transpose(1, 2);  // [6, K, N], strides N K, 1, K
      EXPECT_TRUE(at::allclose(one_row_matmul(row, columns).to(at::kDouble), written_out(row, columns), 1e-5, 1e-5))
          << "columns, K " << K << " N " << N;
    }
  }
}

TEST(OneRowMatmul, BroadcastsBatchDimensionsAsMatmul) {
  at::manual_seed(4);
  torch::NoGradGuard no_grad;
  // The same encoder outputs for every beam: expanded, stride 0 over the beams.
  const auto keys = at::randn({3, 1, 30, 70}).expand({3, 5, 30, 70});
  const auto weights = at::softmax(at::randn({3, 5, 1, 30}), -1);
  EXPECT_TRUE(at::allclose(one_row_matmul(weights, keys), at::matmul(weights, keys), 1e-5, 1e-6));
  // Sizes of 1 against the other operand's: [2, 1, 1, K] x [1, 4, K, N], and a 2-D row.
  const auto row = at::randn({2, 1, 1, 9}), matrix = at::randn({1, 4, 9, 33});
  const auto out = one_row_matmul(row, matrix);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{2, 4, 1, 33}));
  EXPECT_TRUE(at::allclose(out, at::matmul(row, matrix), 1e-5, 1e-6));
  const auto flat = at::randn({1, 9});
  EXPECT_TRUE(at::allclose(one_row_matmul(flat, matrix), at::matmul(flat, matrix), 1e-5, 1e-6));
  // A query against cached keys [B, H, S, Dh] through their transpose, as the attention's scores.
  const auto q = at::randn({4, 2, 1, 32}), k = at::randn({4, 2, 11, 32});
  EXPECT_TRUE(at::allclose(one_row_matmul(q, k.transpose(-2, -1)), at::matmul(q, k.transpose(-2, -1)), 1e-5, 1e-6));
}

TEST(OneRowMatmul, ReadsStridedRowsAndMatrices) {
  at::manual_seed(5);
  torch::NoGradGuard no_grad;
  // A row whose elements lie 3 apart, and a matrix whose rows lie 2 N apart (every other row).
  const auto row = at::randn({4, 1, 24}).slice(2, 0, 24, 3);           // [4, 1, 8], stride 3
  const auto matrix = at::randn({4, 16, 40}).slice(1, 0, 16, 2);       // [4, 8, 40], rows 80 apart
  EXPECT_TRUE(at::allclose(one_row_matmul(row, matrix), at::matmul(row, matrix), 1e-5, 1e-6));
  // Neither the matrix's rows nor its columns contiguous: the broadcast path, the same values.
  const auto neither = at::randn({4, 16, 80}).slice(1, 0, 16, 2).slice(2, 0, 80, 2);  // [4, 8, 40]
  EXPECT_TRUE(at::allclose(one_row_matmul(row, neither), at::matmul(row, neither), 1e-5, 1e-6));
  // Empty sizes.
  EXPECT_EQ(one_row_matmul(at::randn({3, 1, 0}), at::randn({3, 0, 5})).abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(one_row_matmul(at::randn({3, 1, 4}), at::randn({3, 4, 0})).numel(), 0);
}

TEST(OneRowMatmul, SameAtAnyThreadCount) {
  at::manual_seed(6);
  torch::NoGradGuard no_grad;
  const auto weights = at::randn({80, 1, 30}), keys = at::randn({80, 30, 256});
  at::Tensor one, two;
  {
    const test::ThreadCount threads(1);
    one = one_row_matmul(weights, keys);
  }
  {
    const test::ThreadCount threads(2);
    two = one_row_matmul(weights, keys);
  }
  EXPECT_TRUE(at::equal(one, two));
}

TEST(OneRowMatmul, KeepsGradientsWhereTheyAreNeeded) {
  at::manual_seed(7);
  const auto row = torch::randn({3, 1, 6}, torch::requires_grad()), matrix = torch::randn({3, 6, 20}, torch::requires_grad());
  const auto out = one_row_matmul(row, matrix);
  ASSERT_TRUE(out.requires_grad());
  const auto grads = torch::autograd::grad({out.square().sum()}, {row, matrix});
  const auto r = row.detach().requires_grad_(), m = matrix.detach().requires_grad_();
  const auto expected = torch::autograd::grad({at::matmul(r, m).square().sum()}, {r, m});
  EXPECT_TRUE(at::allclose(grads[0], expected[0], 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(grads[1], expected[1], 1e-4, 1e-5));
}

}  // namespace
}  // namespace mixseq
