#include "mixseq/nn/bf16_matmul.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <dlfcn.h>

#include <algorithm>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// oneDNN's C API (dnnl.h, stable since oneDNN 1.0): row-major C = alpha op(A) op(B) + beta C,
// returning dnnl_success (0) or an error status.
using DnnlGemmBf16 = int (*)(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha, const void* A,
                             int64_t lda, const void* B, int64_t ldb, float beta, float* C, int64_t ldc);

DnnlGemmBf16 dnnl_gemm_bf16() {
  static const auto gemm = reinterpret_cast<DnnlGemmBf16>(dlsym(RTLD_DEFAULT, "dnnl_gemm_bf16bf16f32"));
  return gemm;
}

// A matrix's BLAS description: 'N' with rows `leading` apart, or 'T' for a transposed view.
struct Layout {
  char transpose;
  int64_t leading;
};

bool blas_layout(const at::Tensor& m, Layout& layout) {
  if (m.stride(1) == 1 && m.stride(0) >= std::max<int64_t>(1, m.size(1))) {
    layout = {'N', m.stride(0)};
    return true;
  }
  if (m.stride(0) == 1 && m.stride(1) >= std::max<int64_t>(1, m.size(0))) {
    layout = {'T', m.stride(1)};
    return true;
  }
  return false;
}

}  // namespace

bool bf16_matmul_is_direct() { return dnnl_gemm_bf16() != nullptr; }

void bf16_matmul_into(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor& c, bool accumulate) {
  MIXSEQ_CHECK(a.dim() == 2 && b.dim() == 2 && c.dim() == 2 && a.size(1) == b.size(0) && c.size(0) == a.size(0) &&
                   c.size(1) == b.size(1),
               "bf16_matmul_into: needs a [M, K], b [K, N] and c [M, N]; got ", a.sizes(), ", ", b.sizes(), " and ",
               c.sizes());
  MIXSEQ_CHECK(a.scalar_type() == at::kBFloat16 && b.scalar_type() == at::kBFloat16 && c.scalar_type() == at::kFloat &&
                   a.device().is_cpu() && b.device().is_cpu() && c.device().is_cpu(),
               "bf16_matmul_into: needs bf16 a and b and fp32 c on the CPU; got ", a.scalar_type(), ", ",
               b.scalar_type(), " and ", c.scalar_type());
  RECORD_FUNCTION("mixseq::bf16_matmul_into", std::vector<c10::IValue>{});  // a row of its own in --profile
  Layout a_layout{}, b_layout{};
  const auto gemm = dnnl_gemm_bf16();
  if (gemm && c.numel() > 0 && a.size(1) > 0 && blas_layout(a, a_layout) && blas_layout(b, b_layout) &&
      c.stride(1) == 1 && c.stride(0) >= c.size(1)) {
    const int status = gemm(a_layout.transpose, b_layout.transpose, c.size(0), c.size(1), a.size(1), 1.0f, a.data_ptr(),
                            a_layout.leading, b.data_ptr(), b_layout.leading, accumulate ? 1.0f : 0.0f,
                            c.data_ptr<float>(), c.stride(0));
    MIXSEQ_CHECK(status == 0, "dnnl_gemm_bf16bf16f32 failed with oneDNN status ", status);
    return;
  }
  // Without oneDNN's entry point (PyTorch 2.x links oneDNN statically and hides it): the fp32
  // product of the bf16 values, which is what the gemm above computes. at::mm on the bf16 tensors
  // would round the product to bf16 (relative 4e-3), and the gradients with it.
  const auto product = at::mm(a.to(at::kFloat), b.to(at::kFloat));
  if (accumulate) {
    c.add_(product);
  } else {
    c.copy_(product);
  }
}

}  // namespace mixseq
