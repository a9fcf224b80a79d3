#include "mixseq/nn/gru_inference.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdint>
#include <vector>

#include "mixseq/nn/batched_matmul.h"
#include "mixseq/nn/vectorized_tanh.h"
#include "mixseq/util/error.h"
#include "util/torch_compat.h"

namespace mixseq {

bool gru_inference_applies(const torch::Tensor& x, const std::vector<GruWeights>& directions) {
  if (!x.device().is_cpu() || x.scalar_type() != at::kFloat || at::GradMode::is_enabled() ||
      compat::is_autocast_enabled(c10::DeviceType::CPU) || directions.empty() || directions.size() > 2)
    return false;
  for (const auto& w : directions)
    for (const auto* t : {&w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh})
      if (!t->defined() || !t->device().is_cpu() || t->scalar_type() != at::kFloat) return false;
  return true;
}

torch::Tensor gru_inference(const torch::Tensor& x, const torch::Tensor& lengths,
                            const std::vector<GruWeights>& directions) {
  MIXSEQ_CHECK(gru_inference_applies(x, directions), "gru_inference: needs fp32 CPU tensors, autograd off");
  MIXSEQ_CHECK(x.dim() == 3, "gru_inference: x must be [T, B, Din], not ", x.sizes());
  const int64_t steps = x.size(0), batch = x.size(1), in = x.size(2);
  const int64_t hidden = directions[0].w_hh.size(1), gates = 3 * hidden;
  const auto count = static_cast<int64_t>(directions.size());
  for (const auto& w : directions)
    MIXSEQ_CHECK(w.w_ih.sizes() == torch::IntArrayRef({gates, in}) && w.w_hh.sizes() == torch::IntArrayRef({gates, hidden}) &&
                     w.b_ih.numel() == gates && w.b_hh.numel() == gates,
                 "gru_inference: weights [", w.w_ih.sizes(), "], [", w.w_hh.sizes(), "] do not fit x [", x.sizes(),
                 "] and hidden ", hidden);
  const auto lens_tensor = lengths.to(torch::kCPU, torch::kLong).contiguous();
  MIXSEQ_CHECK(lens_tensor.numel() == batch, "gru_inference: ", lens_tensor.numel(), " lengths for ", batch,
               " utterances");
  const std::vector<int64_t> lens(lens_tensor.data_ptr<int64_t>(), lens_tensor.data_ptr<int64_t>() + batch);
  for (const int64_t len : lens)
    MIXSEQ_CHECK(len >= 1 && len <= steps, "gru_inference: a length (", len, ") outside 1..", steps);

  // Input products of all steps and directions, with b_ih and the r, z part of b_hh: [T, B, D, 3H]
  std::vector<torch::Tensor> w_ih, bias;
  for (const auto& w : directions) {
    w_ih.push_back(w.w_ih.detach());
    bias.push_back(w.b_ih.detach() +
                   at::cat({w.b_hh.detach().narrow(0, 0, 2 * hidden), at::zeros({hidden}, w.b_hh.options())}));
  }
  const torch::Tensor inputs =
      at::addmm(at::cat(bias), x.reshape({steps * batch, in}), at::cat(w_ih).t()).contiguous();
  torch::Tensor out = at::empty({steps, batch, count, hidden}, x.options());
  const float* pin = inputs.data_ptr<float>();
  float* pout = out.data_ptr<float>();
  const bool blas = batched_matmul_in_place(at::empty({1, 1, batch, hidden}, x.options()),
                                            directions[0].w_hh.detach().t().unsqueeze(0).unsqueeze(0));

  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t d = begin; d < end; ++d) {
      // (detached: worker threads may have autograd on, and out= products refuse parameters then)
      const torch::Tensor w_hh_t = directions[d].w_hh.detach().t().unsqueeze(0).unsqueeze(0);  // [1, 1, H, 3H]
      const torch::Tensor b_hn = directions[d].b_hh.detach().narrow(0, 2 * hidden, hidden).contiguous();
      const float* pb = b_hn.data_ptr<float>();
      torch::Tensor h = at::zeros({1, 1, batch, hidden}, x.options());
      torch::Tensor recurrent = at::empty({1, 1, batch, gates}, x.options());
      std::vector<float> rz(batch * 2 * hidden), n(batch * hidden);
      float* ph = h.data_ptr<float>();
      const float* pr = recurrent.data_ptr<float>();
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t t = d == 0 ? s : steps - 1 - s;
        if (blas) batched_matmul_into(h, w_hh_t, recurrent);
        else at::matmul_out(recurrent, h, w_hh_t);
        // r and z: σ(a) = (1 + tanh(a / 2)) / 2
        for (int64_t b = 0; b < batch; ++b) {
          const float* gi = pin + ((t * batch + b) * count + d) * gates;
          const float* gh = pr + b * gates;
          float* g = rz.data() + b * 2 * hidden;
          for (int64_t j = 0; j < 2 * hidden; ++j) g[j] = 0.5f * (gi[j] + gh[j]);
        }
        vectorized_tanh_in_place(rz.data(), batch * 2 * hidden);
        for (int64_t b = 0; b < batch; ++b) {
          const float* gi = pin + ((t * batch + b) * count + d) * gates + 2 * hidden;
          const float* gh = pr + b * gates + 2 * hidden;
          const float* r = rz.data() + b * 2 * hidden;
          float* nb = n.data() + b * hidden;
          for (int64_t j = 0; j < hidden; ++j) nb[j] = gi[j] + 0.5f * (1.0f + r[j]) * (gh[j] + pb[j]);
        }
        vectorized_tanh_in_place(n.data(), batch * hidden);
        for (int64_t b = 0; b < batch; ++b) {
          float* hb = ph + b * hidden;
          float* o = pout + ((t * batch + b) * count + d) * hidden;
          if (t >= lens[b]) {  // padding: output 0, and the backward direction starts afresh at the last frame
            for (int64_t j = 0; j < hidden; ++j) hb[j] = 0.0f, o[j] = 0.0f;
            continue;
          }
          const float* z = rz.data() + b * 2 * hidden + hidden;
          const float* nb = n.data() + b * hidden;
          for (int64_t j = 0; j < hidden; ++j) {
            const float value = nb[j] + 0.5f * (1.0f + z[j]) * (hb[j] - nb[j]);
            hb[j] = value;
            o[j] = value;
          }
        }
      }
    }
  });
  return out.view({steps, batch, count * hidden});
}

}  // namespace mixseq
