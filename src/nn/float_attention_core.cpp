#include "mixseq/nn/float_attention_core.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#ifdef MIXSEQ_WITH_CBLAS
#include <cblas.h>
#endif

#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/softmax_rows.h"
#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/error.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

// Whether every [rows, Dh] matrix of a [B, H, rows, Dh] tensor is row-major, as BLAS reads it.
bool head_matrices_row_major(const torch::Tensor& t) {
  return t.dim() == 4 && (t.stride(3) == 1 || t.size(3) == 1) && (t.size(2) == 1 || t.stride(2) >= t.size(3));
}

#ifdef MIXSEQ_WITH_CBLAS

// The (b, h) matrices of a [B, H, rows, Dh] fp32 tensor, each row-major with leading dimension ld.
struct HeadMatrices {
  explicit HeadMatrices(const torch::Tensor& t)
      : data(t.data_ptr<float>()), batch_stride(t.stride(0)), head_stride(t.stride(1)),
        ld(t.size(2) == 1 ? std::max<int64_t>(t.size(3), 1) : t.stride(2)) {}
  const float* at(int64_t b, int64_t h) const { return data + b * batch_stride + h * head_stride; }

  const float* data;
  int64_t batch_stride, head_stride, ld;
};

// c [m, n] (row-major, leading dimension ldc) = alpha op(a) op(b).
void attention_gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, m, n, k,
              alpha, a, lda, b, ldb, 0.0f, c, ldc);
}

// blocked [Bm, 1, Tm, S] bool -> [Bm, Tm, S] fp32, -inf where blocked and 0 elsewhere, with the
// offsets of (b, t)'s row; an empty mask (none) gives null rows.
struct AdditiveMask {
  AdditiveMask(const torch::Tensor& blocked, int64_t s) {
    if (blocked.numel() == 0) return;
    MIXSEQ_CHECK(blocked.dim() == 4 && blocked.size(1) == 1 && blocked.size(3) == s,
                 "float_attention_core: the mask must be [B or 1, 1, T or 1, S], got ", blocked.sizes());
    const auto mask = blocked.select(1, 0);  // [Bm, Tm, S]
    values = at::zeros(mask.sizes(), at::TensorOptions().dtype(at::kFloat))
                 .masked_fill_(mask, -std::numeric_limits<float>::infinity());
    batch_step = mask.size(0) == 1 ? 0 : mask.size(1) * s;
    row_step = mask.size(1) == 1 ? 0 : s;
  }
  const float* row(int64_t b, int64_t t) const {
    return values.defined() ? values.data_ptr<float>() + b * batch_step + t * row_step : nullptr;
  }

  torch::Tensor values;
  int64_t batch_step = 0, row_step = 0;
};

class FloatAttentionCore : public torch::autograd::Function<FloatAttentionCore> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& q,
                               const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& blocked,
                               double dropout_p) {
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), S = k.size(2), Dh = q.size(3);
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(Dh)));
    const HeadMatrices qm(q), km(k), vm(v);
    const AdditiveMask mask(blocked, S);
    auto probs = at::empty({B, H, T, S}, q.options());     // the softmax's output, kept for backward
    auto output = at::empty({B, T, H, Dh}, q.options());  // seen as [B, H, T, Dh]
    float* p = probs.data_ptr<float>();
    float* o = output.data_ptr<float>();
    const bool dropout = dropout_p > 0.0;
    // The context's product for (b, h), from its weights w [T, S] (row-major).
    const auto context_product = [&](int64_t b, int64_t h, const float* w) {
      attention_gemm(false, false, T, Dh, S, 1.0f, w, S, vm.at(b, h), vm.ld, o + b * T * H * Dh + h * Dh, H * Dh);
    };
    at::parallel_for(0, B * H, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / H, h = i % H;
        float* scores = p + i * T * S;
        attention_gemm(false, true, T, S, Dh, scale, qm.at(b, h), qm.ld, km.at(b, h), km.ld, scores, S);
        for (int64_t t = 0; t < T; ++t) masked_softmax_row(scores + t * S, nullptr, mask.row(b, t), S);
        if (!dropout) context_product(b, h, scores);
      }
    });
    torch::Tensor kept;  // dropout's mask: 0 or 1 / (1 - p)
    if (dropout) {
      torch::Tensor dropped;
      std::tie(dropped, kept) = hashed_dropout_with_mask(probs, dropout_p);
      const float* d = dropped.data_ptr<float>();
      at::parallel_for(0, B * H, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) context_product(i / H, i % H, d + i * T * S);
      });
    }
    context->save_for_backward({q, k, v, probs, kept});
    return output.permute({0, 2, 1, 3});  // [B, H, T, Dh]
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3], &kept = saved[4];
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), S = k.size(2), Dh = q.size(3);
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(Dh)));
    auto grad_output = gradients[0];  // [B, H, T, Dh]
    if (!head_matrices_row_major(grad_output)) grad_output = grad_output.contiguous();
    const HeadMatrices qm(q), km(k), vm(v), gm(grad_output);
    const bool need_q = context->needs_input_grad(0), need_k = context->needs_input_grad(1),
               need_v = context->needs_input_grad(2);
    const auto options = q.options();
    torch::Tensor grad_q, grad_k, grad_v;  // [B, T or S, H, Dh]
    if (need_q) grad_q = at::empty({B, T, H, Dh}, options);
    if (need_k) grad_k = at::empty({B, S, H, Dh}, options);
    if (need_v) grad_v = at::empty({B, S, H, Dh}, options);
    const float* p = probs.data_ptr<float>();
    const float* m = kept.defined() ? kept.data_ptr<float>() : nullptr;
    float* dq = need_q ? grad_q.data_ptr<float>() : nullptr;
    float* dk = need_k ? grad_k.data_ptr<float>() : nullptr;
    float* dv = need_v ? grad_v.data_ptr<float>() : nullptr;
    at::parallel_for(0, B * H, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> dropped(m != nullptr ? T * S : 0), grad_scores(T * S);
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / H, h = i % H;
        const float* weights = p + i * T * S;   // the softmax's output
        const float* used = weights;            // what met v: after dropout
        if (m != nullptr) {
          const float* keep = m + i * T * S;
          for (int64_t j = 0; j < T * S; ++j) dropped[j] = weights[j] * keep[j];
          used = dropped.data();
        }
        const float* go = gm.at(b, h);
        if (need_v)  // dV = usedᵀ dO
          attention_gemm(true, false, S, Dh, T, 1.0f, used, S, go, gm.ld, dv + b * S * H * Dh + h * Dh, H * Dh);
        if (!need_q && !need_k) continue;
        float* ds = grad_scores.data();
        attention_gemm(false, true, T, S, Dh, 1.0f, go, gm.ld, vm.at(b, h), vm.ld, ds, S);  // d(used) = dO Vᵀ
        if (m != nullptr) {
          const float* keep = m + i * T * S;
          for (int64_t j = 0; j < T * S; ++j) ds[j] *= keep[j];
        }
        for (int64_t t = 0; t < T; ++t) softmax_backward_row(weights + t * S, ds + t * S, S);
        if (need_q)  // dQ = scale dS K
          attention_gemm(false, false, T, Dh, S, scale, ds, S, km.at(b, h), km.ld, dq + b * T * H * Dh + h * Dh, H * Dh);
        if (need_k)  // dK = scale dSᵀ Q
          attention_gemm(true, false, S, Dh, T, scale, ds, S, qm.at(b, h), qm.ld, dk + b * S * H * Dh + h * Dh, H * Dh);
      }
    });
    const auto heads_first = [](const torch::Tensor& g) { return g.defined() ? g.permute({0, 2, 1, 3}) : g; };
    return {heads_first(grad_q), heads_first(grad_k), heads_first(grad_v), torch::Tensor(), torch::Tensor()};
  }
};

#endif  // MIXSEQ_WITH_CBLAS

}  // namespace

bool takes_float_attention_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
#ifdef MIXSEQ_WITH_CBLAS
  for (const auto* t : {&q, &k, &v}) {
    if (!t->device().is_cpu() || t->scalar_type() != at::kFloat || !head_matrices_row_major(*t)) return false;
  }
  return q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3) && k.sizes() == v.sizes() &&
         !compat::is_autocast_enabled(c10::DeviceType::CPU) &&
         !aten_at_baseline_kernels();  // the golden runs keep the plain kernel; this softmax picks its instruction set
#else
  return false;
#endif
}

torch::Tensor float_attention_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& blocked, double dropout_p) {
  MIXSEQ_CHECK(takes_float_attention_core(q, k, v), "float_attention_core: no kernel for q ", q.sizes(), " ",
               q.scalar_type(), " on ", q.device(), ", k ", k.sizes(), ", v ", v.sizes());
#ifdef MIXSEQ_WITH_CBLAS
  // An empty tensor for no mask: autograd::Function takes no undefined tensor arguments.
  return FloatAttentionCore::apply(q, k, v, blocked.defined() ? blocked : at::empty({0}, q.options().dtype(at::kBool)),
                                   dropout_p);
#else
  return {};
#endif
}

}  // namespace mixseq
