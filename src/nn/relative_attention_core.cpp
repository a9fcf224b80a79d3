#include "mixseq/nn/relative_attention_core.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <limits>

#include "mixseq/nn/batched_matmul.h"
#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/relative_shift.h"
#include "mixseq/nn/softmax_rows.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// The views every product reads, from the inputs' own layouts (no copies).
struct Views {
  int64_t B, T, H, Dh, K;
  torch::Tensor qu;  // [H, B, T, Dh]
  torch::Tensor qv;  // [H, 1, B T, Dh]
  torch::Tensor k;   // [H, B, Dh, K]
  torch::Tensor v;   // [H, B, K, Dh]
  torch::Tensor rk;  // [H, 1, Dh, K]

  Views(const torch::Tensor& q_u, const torch::Tensor& q_v, const torch::Tensor& key_value, const torch::Tensor& r_k)
      : B(q_u.size(0)), T(q_u.size(1)), H(q_u.size(2)), Dh(q_u.size(3)), K(key_value.size(1)) {
    const auto kv = key_value.view({B, K, 2, H, Dh});
    qu = q_u.permute({2, 0, 1, 3});
    qv = q_v.reshape({B * T, H, Dh}).permute({1, 0, 2}).unsqueeze(1);
    k = kv.select(2, 0).permute({2, 0, 3, 1});
    v = kv.select(2, 1).permute({2, 0, 1, 3});
    rk = r_k.permute({1, 2, 0}).unsqueeze(1);
  }
};

torch::Tensor plain_core(const torch::Tensor& q_u, const torch::Tensor& q_v, const torch::Tensor& key_value,
                         const torch::Tensor& r_k, const torch::Tensor& blocked, double dropatt, bool training) {
  const Views x(q_u, q_v, key_value, r_k);
  const auto content = batched_matmul(x.qu, x.k);                                           // [H, B, T, K]
  const auto position = batched_matmul(x.qv, x.rk).view({x.H, x.B, x.T, x.K});             // [H, B, T, K]
  auto scores = add_relative_shift(content, position);                                     // [H, B, T, K]
  if (scores.scalar_type() != at::kFloat && scores.scalar_type() != at::kDouble) scores = scores.to(at::kFloat);
  if (blocked.defined()) scores.masked_fill_(blocked, kMinusInfinity);                      // scores is ours
  const auto probs = hashed_dropout(at::softmax(scores, -1), dropatt, training);           // [H, B, T, K]
  const auto heads = batched_matmul(probs.to(x.v.scalar_type()), x.v, {1, 2, 0, 3});       // [H, B, T, Dh]
  return heads.permute({1, 2, 0, 3});                                                      // [B, T, H, Dh]
}

// Whether shifted_masked_softmax takes these scores: fp32, and a mask of [T, K] or none.
bool scores_in_one_sweep(const torch::Tensor& scores, const torch::Tensor& blocked) {
  return scores.scalar_type() == at::kFloat &&
         (blocked.numel() == 0 || (blocked.scalar_type() == at::kBool && blocked.dim() == 2 &&
                                   blocked.size(0) == scores.size(2) && blocked.size(1) == scores.size(3)));
}

// scores [H, B, T, K] <- softmax(scores + relative_shift(position), blocked keys at 0), row by row in
// one sweep (nn/softmax_rows.h): position [H, 1, B T, K] as batched_matmul_into wrote it.
void shifted_masked_softmax(torch::Tensor& scores, const torch::Tensor& position, const torch::Tensor& blocked) {
  const int64_t T = scores.size(2), K = scores.size(3), rows = scores.numel() / K;
  float* z = scores.data_ptr<float>();
  const float* p = position.data_ptr<float>();
  // [T, K]: -inf where blocked, 0 elsewhere; added to each (h, b) matrix's rows.
  const auto mask = blocked.numel() > 0 ? at::zeros({T, K}, scores.options()).masked_fill_(blocked, kMinusInfinity)
                                        : torch::Tensor();
  const float* m = blocked.numel() > 0 ? mask.data_ptr<float>() : nullptr;
  at::parallel_for(0, rows, std::max<int64_t>(1, 16384 / K), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t t = row % T, matrix = row / T;  // query t of matrix (h, b)
      // Element (t, j) of relative_shift_view: offset (T - 1) + t (K - 1) + j of the matrix.
      const float* shifted = p + matrix * T * K + (T - 1) + t * (K - 1);
      masked_softmax_row(z + row * K, shifted, m == nullptr ? nullptr : m + t * K, K);
    }
  });
}

class FusedCore : public torch::autograd::Function<FusedCore> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& q_u,
                               const torch::Tensor& q_v, const torch::Tensor& key_value, const torch::Tensor& r_k,
                               const torch::Tensor& blocked, double dropatt, bool training) {
    const Views x(q_u, q_v, key_value, r_k);
    const auto options = q_u.options();
    auto scores = at::empty({x.H, x.B, x.T, x.K}, options);
    batched_matmul_into(x.qu, x.k, scores);                                    // (a) + (c)
    const auto position = at::empty({x.H, 1, x.B * x.T, x.K}, options);
    batched_matmul_into(x.qv, x.rk, position);                                 // (b) + (d), per distance
    torch::Tensor probs;                                                       // [H, B, T, K]
    if (scores_in_one_sweep(scores, blocked)) {
      shifted_masked_softmax(scores, position, blocked);
      probs = scores;
    } else {
      scores.add_(relative_shift_view(position.view({x.H, x.B, x.T, x.K})));
      if (blocked.numel() > 0) scores.masked_fill_(blocked, kMinusInfinity);
      probs = at::softmax(scores, -1);
    }
    torch::Tensor dropped = probs, mask;
    if (training && dropatt > 0.0) std::tie(dropped, mask) = hashed_dropout_with_mask(probs, dropatt);
    auto heads = at::empty({x.B, x.T, x.H, x.Dh}, options);                   // written as [H, B, T, Dh]
    batched_matmul_into(dropped, x.v, heads.permute({2, 0, 1, 3}));
    context->save_for_backward({q_u, q_v, key_value, r_k, probs, mask.defined() ? mask : torch::Tensor()});
    return heads;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &q_u = saved[0], &q_v = saved[1], &key_value = saved[2], &r_k = saved[3], &probs = saved[4];
    const auto& mask = saved[5];
    const Views x(q_u, q_v, key_value, r_k);
    const auto options = probs.options();
    const auto grad_heads = gradients[0].permute({2, 0, 1, 3});               // [H, B, T, Dh]
    const auto dropped = mask.defined() ? probs * mask : probs;

    auto grad_key_value = at::empty({x.B, x.K, 2, x.H, x.Dh}, options);
    const auto grad_kv_rows = [&](int64_t which) { return grad_key_value.select(2, which).permute({2, 0, 1, 3}); };
    batched_matmul_into(dropped.transpose(2, 3), grad_heads, grad_kv_rows(1));                 // dV [H, B, K, Dh]
    auto grad_probs = at::empty({x.H, x.B, x.T, x.K}, options);
    batched_matmul_into(grad_heads, x.v.transpose(2, 3), grad_probs);                         // [H, B, T, K]
    if (mask.defined()) grad_probs.mul_(mask);
    const auto grad_scores = at::_softmax_backward_data(grad_probs, probs, -1, probs.scalar_type());  // 0 where masked
    batched_matmul_into(grad_scores.transpose(2, 3), x.qu, grad_kv_rows(0));                  // dK [H, B, K, Dh]
    auto grad_q_u = at::empty({x.B, x.T, x.H, x.Dh}, options);
    batched_matmul_into(grad_scores, x.k.transpose(2, 3), grad_q_u.permute({2, 0, 1, 3}));
    const auto grad_position = relative_shift_backward(grad_scores).view({x.H, 1, x.B * x.T, x.K});
    auto grad_q_v = at::empty({x.B, x.T, x.H, x.Dh}, options);
    batched_matmul_into(grad_position, x.rk.transpose(2, 3),
                        grad_q_v.view({x.B * x.T, x.H, x.Dh}).permute({1, 0, 2}).unsqueeze(1));
    auto grad_r_k = at::empty({x.K, x.H, x.Dh}, options);
    batched_matmul_into(grad_position.transpose(2, 3), x.qv, grad_r_k.permute({1, 0, 2}).unsqueeze(1));
    return {grad_q_u, grad_q_v, grad_key_value.view(key_value.sizes()), grad_r_k,
            torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor relative_attention_core(const torch::Tensor& q_u, const torch::Tensor& q_v,
                                      const torch::Tensor& key_value, const torch::Tensor& r_k,
                                      const torch::Tensor& blocked, double dropatt, bool training,
                                      AttentionKernel kernel) {
  MIXSEQ_CHECK(q_u.dim() == 4 && q_v.sizes() == q_u.sizes() && key_value.dim() == 3 &&
                   key_value.size(0) == q_u.size(0) && key_value.size(2) == 2 * q_u.size(2) * q_u.size(3) &&
                   r_k.dim() == 3 && r_k.size(0) == key_value.size(1) && r_k.size(1) == q_u.size(2) &&
                   r_k.size(2) == q_u.size(3) && q_u.size(1) <= key_value.size(1),
               "relative_attention_core: q_u, q_v [B, T, H, Dh], key_value [B, K, 2 H Dh] and r_k [K, H, Dh] ",
               "with T <= K, got ", q_u.sizes(), ", ", q_v.sizes(), ", ", key_value.sizes(), " and ", r_k.sizes());
  const bool fused = kernel == AttentionKernel::kAuto && batched_matmul_in_place(q_u, key_value) &&
                     q_v.scalar_type() == q_u.scalar_type() && r_k.scalar_type() == q_u.scalar_type();
  if (!fused) return plain_core(q_u, q_v, key_value, r_k, blocked, dropatt, training);
  // Function::apply takes no undefined tensors: an empty one stands for "nothing blocked".
  return FusedCore::apply(q_u.contiguous(), q_v.contiguous(), key_value.contiguous(), r_k.contiguous(),
                          blocked.defined() ? blocked : at::empty({0}, at::kBool), dropatt, training);
}

}  // namespace mixseq
