#include "mixseq/nn/one_row_matmul.h"

#include <ATen/ATen.h>

namespace mixseq {

bool uses_broadcast_row_product(const torch::Tensor& row) {
  return row.size(-2) == 1 && row.device().is_cpu() && row.scalar_type() == at::kFloat;
}

torch::Tensor one_row_matmul(const torch::Tensor& row, const torch::Tensor& matrix) {
  if (!uses_broadcast_row_product(row)) return at::matmul(row, matrix);
  return (row.transpose(-2, -1) * matrix).sum(-2, /*keepdim=*/true);  // [..., K, 1] * [..., K, N] -> [..., 1, N]
}

}  // namespace mixseq
