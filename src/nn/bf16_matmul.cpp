#include "mixseq/nn/bf16_matmul.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <dlfcn.h>

#include <algorithm>
#include <vector>

#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/error.h"
#include "mixseq/util/stop_request.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

// oneDNN's C API (dnnl.h, stable since oneDNN 1.0): row-major C = alpha op(A) op(B) + beta C,
// returning dnnl_success (0) or an error status.
using DnnlGemmBf16 = int (*)(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha, const void* A,
                             int64_t lda, const void* B, int64_t ldb, float beta, float* C, int64_t ldc);

using DnnlSgemm = int (*)(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// oneDNN's sgemm, unless ATen is held to its baseline kernels (util/cpu_kernels.h): then at::mm;
// oneDNN's sgemm would choose its instruction set by itself.
DnnlSgemm dnnl_sgemm() {
  static const auto gemm = [] {
    if (aten_at_baseline_kernels()) return DnnlSgemm{nullptr};
    return reinterpret_cast<DnnlSgemm>(dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
  }();
  return gemm;
}

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

void check_product(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, at::ScalarType operands,
                   const char* name) {
  MIXSEQ_CHECK(a.dim() == 2 && b.dim() == 2 && c.dim() == 2 && a.size(1) == b.size(0) && c.size(0) == a.size(0) &&
                   c.size(1) == b.size(1),
               name, ": needs a [M, K], b [K, N] and c [M, N]; got ", a.sizes(), ", ", b.sizes(), " and ", c.sizes());
  MIXSEQ_CHECK(a.scalar_type() == operands && b.scalar_type() == operands && c.scalar_type() == at::kFloat &&
                   a.device().is_cpu() && b.device().is_cpu() && c.device().is_cpu(),
               name, ": needs ", operands, " a and b and fp32 c on the CPU; got ", a.scalar_type(), ", ",
               b.scalar_type(), " and ", c.scalar_type());
}

// c (+)= a b through one of oneDNN's gemm entry points (row-major, fp32 c), when it is there and the
// layouts allow; false otherwise.
template <typename Operand, typename Gemm>
bool direct_gemm(Gemm gemm, const at::Tensor& a, const at::Tensor& b, at::Tensor& c, bool accumulate,
                 const char* name) {
  Layout a_layout{}, b_layout{};
  if (!gemm || c.numel() == 0 || a.size(1) == 0 || !blas_layout(a, a_layout) || !blas_layout(b, b_layout) ||
      c.stride(1) != 1 || c.stride(0) < c.size(1))
    return false;
  const int status = gemm(a_layout.transpose, b_layout.transpose, c.size(0), c.size(1), a.size(1), 1.0f,
                          static_cast<const Operand*>(a.data_ptr()), a_layout.leading,
                          static_cast<const Operand*>(b.data_ptr()), b_layout.leading, accumulate ? 1.0f : 0.0f,
                          c.data_ptr<float>(), c.stride(0));
  MIXSEQ_CHECK(status == 0, name, " failed with oneDNN status ", status);
  return true;
}

}  // namespace

bool bf16_matmul_is_direct() { return dnnl_gemm_bf16() != nullptr; }

bool float_matmul_is_direct() { return dnnl_sgemm() != nullptr; }

void bf16_matmul_into(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor& c, bool accumulate) {
  check_product(a, b, c, at::kBFloat16, "bf16_matmul_into");
  RECORD_FUNCTION("mixseq::bf16_matmul_into", std::vector<c10::IValue>{});  // a row of its own in --profile
  if (direct_gemm<void>(dnnl_gemm_bf16(), a, b, c, accumulate, "dnnl_gemm_bf16bf16f32")) return;
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

void float_matmul_into(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor& c, bool accumulate) {
  check_product(a, b, c, at::kFloat, "float_matmul_into");
  if (const auto sgemm = dnnl_sgemm()) {
    // Debian's oneDNN 2.x sgemm corrupts the heap when a signal handler runs on a thread inside
    // it: 40 [M, K] x [K, N] shapes in a loop under a 0.2 ms timer signal (SIGALRM, a Python
    // handler) aborted with "corrupted size vs. prev_size" within 4,000 calls, and never without
    // the timer; its bf16 GEMM ran clean under the same test. Training stops on SIGINT and SIGTERM
    // by a handler, and 5 in 12 stopped runs crashed so. The OpenMP pool's other threads never
    // take these two (util/threads.cpp).
    const StopSignalsHeld held;
    if (direct_gemm<float>(sgemm, a, b, c, accumulate, "dnnl_sgemm")) return;
  }
  if (accumulate) {
    c.addmm_(a, b);
  } else {
    at::mm_out(c, a, b);
  }
}

bool direct_float_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                       const float* b, int64_t ldb, float* c, int64_t ldc) {
  const auto sgemm = dnnl_sgemm();
  if (sgemm == nullptr) return false;
  const int status = sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  MIXSEQ_CHECK(status == 0, "dnnl_sgemm failed with oneDNN status ", status);
  return true;
}

torch::Tensor float_matmul(const torch::Tensor& a, const torch::Tensor& b) {
  const bool records = at::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad());
  if (records || a.dim() != 2 || b.dim() != 2 || a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat ||
      !a.device().is_cpu() || !b.device().is_cpu() || compat::is_autocast_enabled(c10::kCPU) ||
      dnnl_sgemm() == nullptr)
    return at::matmul(a, b);
  auto c = at::empty({a.size(0), b.size(1)}, a.options());
  float_matmul_into(a, b, c, /*accumulate=*/false);
  return c;
}

torch::Tensor widening_matmul(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor into) {
  if (a.scalar_type() == at::kBFloat16) {
    const bool accumulate = into.defined();
    if (!accumulate) into = at::empty({a.size(0), b.size(1)}, a.options().dtype(at::kFloat));
    bf16_matmul_into(a, b, into, accumulate);
    return into;
  }
  if (into.defined() && into.scalar_type() == at::kFloat && a.scalar_type() == at::kFloat) {
    float_matmul_into(a, b, into, /*accumulate=*/true);  // addmm_ where oneDNN's sgemm is not called directly
    return into;
  }
  return into.defined() ? into.addmm_(a, b) : float_matmul(a, b);
}

}  // namespace mixseq
