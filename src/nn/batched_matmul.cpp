#include "mixseq/nn/batched_matmul.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <optional>
#include <type_traits>
#include <vector>

#ifdef MIXSEQ_WITH_CBLAS
#include <cblas.h>
#endif

#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/util/error.h"
#include "mixseq/util/stop_request.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

// [P, Q, M, N] allocated with its dimensions in memory in `order`, seen in the logical order.
torch::Tensor empty_in_order(const std::array<int64_t, 4>& sizes, const std::array<int64_t, 4>& order,
                             const at::TensorOptions& options) {
  std::vector<int64_t> memory_sizes(4), logical(4);
  for (int64_t i = 0; i < 4; ++i) {
    memory_sizes[i] = sizes[order[i]];
    logical[order[i]] = i;
  }
  return at::empty(memory_sizes, options).permute(logical);
}

#ifdef MIXSEQ_WITH_CBLAS

// How BLAS reads one [rows, columns] matrix of a tensor: row-major with leading dimension `ld`,
// or transposed (stored column-major). `ok` is false when neither stride is 1.
struct BlasLayout {
  bool ok = false;
  bool transposed = false;
  int64_t ld = 1;
};

BlasLayout blas_layout(const torch::Tensor& t) {
  const int64_t rows = t.size(2), columns = t.size(3), row_stride = t.stride(2), column_stride = t.stride(3);
  if ((column_stride == 1 || columns == 1) && (rows == 1 || row_stride >= std::max<int64_t>(columns, 1)))
    return {true, false, rows == 1 ? std::max<int64_t>(columns, 1) : row_stride};
  if ((row_stride == 1 || rows == 1) && (columns == 1 || column_stride >= std::max<int64_t>(rows, 1)))
    return {true, true, columns == 1 ? std::max<int64_t>(rows, 1) : column_stride};
  return {};
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b,
              ldb, 0.0f, c, ldc);
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
          int64_t ldb, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a, lda, b,
              ldb, 0.0, c, ldc);
}

// From this many multiply-adds a matrix (M N K) its fp32 product goes to oneDNN's sgemm, below it
// to OpenBLAS's. On the 2-core Zen 5 EPYC, each product on one thread of two: Transformer-XL's
// position scores [1024, 32] x [32, 128] (M N K = 4M) took 0.18 ms a batch of 8 through oneDNN
// against 0.43-0.63 through OpenBLAS, and the gradients' [1024, 128] x [128, 32] and
// [128, 1024] x [1024, 32] 0.18-0.25 against 0.44-0.60; of the per-(head, row) products of
// 64 x 32 x 128 (262K) OpenBLAS's small-matrix kernels were quicker for three of four
// (docs/benchmarks.md).
constexpr int64_t kOneDnnProduct = int64_t{1} << 20;

// c (row-major matrices) = a b, every [p, q] product on one thread of LibTorch's pool. OpenBLAS's
// OpenMP build runs single-threaded inside a parallel region, and so does oneDNN's sgemm, so the
// threads do not nest.
template <typename scalar_t>
void batched_gemm(torch::Tensor a, torch::Tensor b, const torch::Tensor& c) {
  auto la = blas_layout(a), lb = blas_layout(b);
  if (!la.ok) a = a.contiguous(), la = blas_layout(a);
  if (!lb.ok) b = b.contiguous(), lb = blas_layout(b);
  const int64_t Q = c.size(1), M = c.size(2), N = c.size(3), K = a.size(3);
  const auto* pa = a.data_ptr<scalar_t>();
  const auto* pb = b.data_ptr<scalar_t>();
  auto* pc = c.data_ptr<scalar_t>();
  const int64_t ldc = M == 1 ? std::max<int64_t>(N, 1) : c.stride(2);
  const bool onednn = std::is_same_v<scalar_t, float> && M * N * K >= kOneDnnProduct && float_matmul_is_direct();
  std::optional<StopSignalsHeld> held;  // for oneDNN's sgemm (nn/bf16_matmul.h)
  if (onednn) held.emplace();
  at::parallel_for(0, c.size(0) * Q, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t p = i / Q, q = i % Q;
      const scalar_t* a_matrix = pa + p * a.stride(0) + q * a.stride(1);
      const scalar_t* b_matrix = pb + p * b.stride(0) + q * b.stride(1);
      scalar_t* c_matrix = pc + p * c.stride(0) + q * c.stride(1);
      if constexpr (std::is_same_v<scalar_t, float>) {
        if (onednn && direct_float_gemm(la.transposed, lb.transposed, M, N, K, a_matrix, la.ld, b_matrix, lb.ld,
                                        c_matrix, ldc))
          continue;
      }
      gemm(la.transposed, lb.transposed, M, N, K, a_matrix, la.ld, b_matrix, lb.ld, c_matrix, ldc);
    }
  });
}

#endif  // MIXSEQ_WITH_CBLAS

void product_into(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& c) {
#ifdef MIXSEQ_WITH_CBLAS
  if (c.numel() == 0) return;
  if (a.size(3) == 0) {
    c.zero_();
  } else if (a.scalar_type() == at::kFloat) {
    batched_gemm<float>(a, b, c);
  } else {
    batched_gemm<double>(a, b, c);
  }
#endif
}

torch::Tensor product(const torch::Tensor& a, const torch::Tensor& b, const std::array<int64_t, 4>& order) {
  auto c = empty_in_order({a.size(0), a.size(1), a.size(2), b.size(3)}, order, a.options());
  product_into(a, b, c);
  return c;
}

class BatchedMatmul : public torch::autograd::Function<BatchedMatmul> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& a,
                               const torch::Tensor& b, std::vector<int64_t> order) {
    context->save_for_backward({a, b});
    return product(a, b, {order[0], order[1], order[2], order[3]});
  }

  // dA = dC B^T, dB = A^T dC, contiguous.
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto& a = saved[0];
    const auto& b = saved[1];
    const auto& grad = gradients[0];
    torch::Tensor grad_a, grad_b;
    if (context->needs_input_grad(0)) grad_a = product(grad, b.transpose(2, 3), {0, 1, 2, 3});
    if (context->needs_input_grad(1)) grad_b = product(a.transpose(2, 3), grad, {0, 1, 2, 3});
    return {grad_a, grad_b, torch::Tensor()};
  }
};

}  // namespace

bool batched_matmul_in_place(const torch::Tensor& a, const torch::Tensor& b) {
#ifdef MIXSEQ_WITH_CBLAS
  return a.device().is_cpu() && b.device().is_cpu() && a.scalar_type() == b.scalar_type() &&
         (a.scalar_type() == at::kFloat || a.scalar_type() == at::kDouble) &&
         !compat::is_autocast_enabled(c10::DeviceType::CPU);
#else
  return false;
#endif
}

void batched_matmul_into(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& c) {
  MIXSEQ_CHECK(a.dim() == 4 && b.dim() == 4 && c.dim() == 4 && a.size(0) == b.size(0) && a.size(1) == b.size(1) &&
                   a.size(3) == b.size(2) && c.size(0) == a.size(0) && c.size(1) == a.size(1) &&
                   c.size(2) == a.size(2) && c.size(3) == b.size(3) && (c.stride(3) == 1 || c.size(3) == 1),
               "batched_matmul_into needs a [P, Q, M, K], b [P, Q, K, N] and c [P, Q, M, N] with row-major "
               "matrices, got ", a.sizes(), ", ", b.sizes(), " and ", c.sizes(), " (strides ", c.strides(), ")");
  MIXSEQ_CHECK(batched_matmul_in_place(a, b) && c.scalar_type() == a.scalar_type(),
               "batched_matmul_into: no BLAS path for these operands (", a.scalar_type(), " on ", a.device(), ")");
  product_into(a, b, c);
}

torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b, const std::array<int64_t, 4>& order) {
  MIXSEQ_CHECK(a.dim() == 4 && b.dim() == 4 && a.size(0) == b.size(0) && a.size(1) == b.size(1) &&
                   a.size(3) == b.size(2),
               "batched_matmul needs a [P, Q, M, K] and b [P, Q, K, N], got ", a.sizes(), " and ", b.sizes());
  std::vector<int64_t> sorted(order.begin(), order.end());
  std::sort(sorted.begin(), sorted.end());
  MIXSEQ_CHECK(sorted == (std::vector<int64_t>{0, 1, 2, 3}) && order[3] == 3,
               "batched_matmul: the output order must be a permutation of 0..3 that ends with 3 (N innermost)");
  if (!batched_matmul_in_place(a, b)) return at::matmul(a, b);
  return BatchedMatmul::apply(a, b, std::vector<int64_t>(order.begin(), order.end()));
}

}  // namespace mixseq
