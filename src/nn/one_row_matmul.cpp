#include "mixseq/nn/one_row_matmul.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "util/lane_dot.h"
#include "util/vector_clones.h"

namespace mixseq {
namespace {

using FloatLanes = Lanes<float>::type;  // sixteen floats

// out [N] = Σ_k r[k · r_stride] m[k · m_stride + n]: the matrix's rows contiguous, k in order
// (lane_weighted_rows, util/lane_dot.h).
MIXSEQ_VECTOR_CLONES
void row_times_rows(const float* __restrict r, int64_t r_stride, const float* __restrict m, int64_t m_stride,
                    int64_t K, int64_t N, float* __restrict out) {
  lane_weighted_rows<float, float>(
      K, N, [&](int64_t k) __attribute__((always_inline)) { return r[k * r_stride]; },
      [&](int64_t k) __attribute__((always_inline)) { return m + k * m_stride; },
      [](FloatLanes& lanes, const float* p) __attribute__((always_inline)) { load_lanes(lanes, p); },
      [](const float* p) __attribute__((always_inline)) { return *p; }, out);
}

// out [N] = Σ_k r[k] m[n · m_stride + k]: the matrix's columns contiguous (a transposed one, as
// keys are for a query's scores), r contiguous: one dot product per output.
MIXSEQ_VECTOR_CLONES
void row_dot_columns(const float* __restrict r, const float* __restrict m, int64_t m_stride, int64_t K, int64_t N,
                     float* __restrict out) {
  for (int64_t n = 0; n < N; ++n) out[n] = lane_dot(r, m + n * m_stride, K);
}

// The batch dimensions' offsets of one operand, broadcast to `batch` (sizes of 1 and expanded
// dimensions read with stride 0).
struct BatchWalk {
  std::vector<int64_t> sizes, strides;

  int64_t offset(int64_t index) const {
    int64_t at = 0;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      at += (index % sizes[d]) * strides[d];
      index /= sizes[d];
    }
    return at;
  }
};

BatchWalk batch_walk(const at::Tensor& expanded, int64_t batch_dims) {
  BatchWalk walk;
  for (int64_t d = 0; d < batch_dims; ++d) {
    walk.sizes.push_back(expanded.size(d));
    walk.strides.push_back(expanded.size(d) == 1 ? 0 : expanded.stride(d));
  }
  return walk;
}

// Whether the fused path takes row @ matrix: fp32 CPU operands with batch dimensions that
// broadcast, one inner size, a contiguous dimension for the kernels to run along, and nothing
// for autograd to record.
bool fused_applies(const at::Tensor& row, const at::Tensor& matrix) {
  if (row.dim() < 2 || matrix.dim() < 2 || !matrix.device().is_cpu() || matrix.scalar_type() != at::kFloat ||
      row.size(-1) != matrix.size(-2))
    return false;
  if (at::GradMode::is_enabled() && (row.requires_grad() || matrix.requires_grad())) return false;
  const bool rows_contiguous = matrix.stride(-1) == 1 || matrix.size(-1) == 1;
  const bool columns_contiguous = (matrix.stride(-2) == 1 || matrix.size(-2) == 1) && row.stride(-1) == 1;
  return rows_contiguous || columns_contiguous;
}

torch::Tensor fused_one_row_matmul(const at::Tensor& row, const at::Tensor& matrix) {
  const int64_t K = row.size(-1), N = matrix.size(-1);
  const auto batch = at::infer_size(row.sizes().slice(0, row.dim() - 2), matrix.sizes().slice(0, matrix.dim() - 2));
  const int64_t batch_dims = static_cast<int64_t>(batch.size());
  auto row_shape = batch, matrix_shape = batch, out_shape = batch;
  row_shape.insert(row_shape.end(), {1, K});
  matrix_shape.insert(matrix_shape.end(), {K, N});
  out_shape.insert(out_shape.end(), {1, N});
  const auto r = row.expand(row_shape), m = matrix.expand(matrix_shape);
  auto out = at::empty(out_shape, row.options());
  const int64_t count = out.numel() / std::max<int64_t>(N, 1);
  if (out.numel() == 0) return out;
  if (K == 0) return out.zero_();
  const BatchWalk row_walk = batch_walk(r, batch_dims), matrix_walk = batch_walk(m, batch_dims);
  const float* r_data = r.data_ptr<float>();
  const float* m_data = m.data_ptr<float>();
  float* out_data = out.data_ptr<float>();
  const int64_t r_stride = r.stride(-1), m_row_stride = m.stride(-2), m_column_stride = m.stride(-1);
  const bool along_rows = m_column_stride == 1 || N == 1;
  at::parallel_for(0, count, std::max<int64_t>(1, 32768 / std::max<int64_t>(K * N, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* ri = r_data + row_walk.offset(i);
      const float* mi = m_data + matrix_walk.offset(i);
      if (along_rows) {
        row_times_rows(ri, r_stride, mi, m_row_stride, K, N, out_data + i * N);
      } else {
        row_dot_columns(ri, mi, m_column_stride, K, N, out_data + i * N);
      }
    }
  });
  return out;
}

}  // namespace

bool uses_broadcast_row_product(const torch::Tensor& row) {
  return row.size(-2) == 1 && row.device().is_cpu() && row.scalar_type() == at::kFloat;
}

torch::Tensor one_row_matmul(const torch::Tensor& row, const torch::Tensor& matrix) {
  if (!uses_broadcast_row_product(row)) return at::matmul(row, matrix);
  if (fused_applies(row, matrix)) return fused_one_row_matmul(row, matrix);
  return (row.transpose(-2, -1) * matrix).sum(-2, /*keepdim=*/true);  // [..., K, 1] * [..., K, N] -> [..., 1, N]
}

}  // namespace mixseq
