#include "mixseq/nn/matrix_vector_cell.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace mixseq {
namespace {

TEST(MatrixVectorCell, EqualsLibTorchsLstmCellAndLinear) {
  torch::manual_seed(2);
  torch::nn::LSTMCell cell(24, 16);
  torch::nn::Linear linear(16, 5);
  for (const int64_t rows : {1, 3}) {  // 1: the gemv path; 3: LibTorch's own
    const auto x = torch::randn({rows, 24}), h = torch::randn({rows, 16}), c = torch::randn({rows, 16});
    const auto [h_ref, c_ref] = cell(x, std::make_tuple(h, c));
    torch::NoGradGuard no_grad;
    EXPECT_EQ(uses_matrix_vector_path(x), rows == 1);
    const auto [h_new, c_new] =
        matrix_vector_lstm_cell(x, h, c, cell->weight_ih, cell->weight_hh, cell->bias_ih, cell->bias_hh);
    EXPECT_TRUE(torch::allclose(h_new, h_ref, 1e-5, 1e-6)) << rows;
    EXPECT_TRUE(torch::allclose(c_new, c_ref, 1e-5, 1e-6)) << rows;
    EXPECT_TRUE(torch::allclose(matrix_vector_linear(h_new, linear->weight, linear->bias), linear(h_new), 1e-5, 1e-6));
    EXPECT_TRUE(torch::allclose(matrix_vector_linear(h_new, linear->weight), linear(h_new) - linear->bias, 1e-5, 1e-6));
  }
  // While autograd records (training), the products stay differentiable: LibTorch's path.
  const auto x = torch::randn({1, 24}, torch::requires_grad());
  EXPECT_FALSE(uses_matrix_vector_path(x));
  auto [h, c] = matrix_vector_lstm_cell(x, torch::zeros({1, 16}), torch::zeros({1, 16}), cell->weight_ih,
                                        cell->weight_hh, cell->bias_ih, cell->bias_hh);
  h.sum().backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_TRUE(cell->weight_ih.grad().defined());
}

}  // namespace
}  // namespace mixseq
