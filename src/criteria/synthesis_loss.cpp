#include "mixseq/criteria/synthesis_loss.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "mixseq/util/error.h"

namespace mixseq {

torch::Tensor guided_attention_weights(const torch::Tensor& text_lengths, const torch::Tensor& frame_lengths,
                                       int64_t max_frames, int64_t max_text, double sigma) {
  MIXSEQ_CHECK(sigma > 0.0, "guided attention: sigma must be > 0, not ", sigma);
  const auto options = torch::TensorOptions().dtype(torch::kFloat).device(text_lengths.device());
  const auto S = text_lengths.to(options).clamp_min(1).view({-1, 1, 1});   // [B, 1, 1]
  const auto T = frame_lengths.to(options).clamp_min(1).view({-1, 1, 1});  // [B, 1, 1]
  const auto s = torch::arange(max_text, options).view({1, 1, -1});        // [1, 1, S]
  const auto t = torch::arange(max_frames, options).view({1, -1, 1});      // [1, T, 1]
  auto w = 1.0 - torch::exp(-(s / S - t / T).pow(2) / (2.0 * sigma * sigma));  // [B, T, S]
  const auto inside = (s < S).logical_and(t < T);                              // [B, T, S]
  return w * inside.to(options);
}

SynthesisLoss synthesis_loss(const torch::Tensor& frames, const torch::Tensor& frames_postnet,
                             const torch::Tensor& gate_logits, const torch::Tensor& targets,
                             const torch::Tensor& gate_targets, const SynthesisLossOptions& options,
                             const torch::Tensor& alignments, const torch::Tensor& text_lengths,
                             const torch::Tensor& frame_lengths) {
  MIXSEQ_CHECK(frames.sizes() == targets.sizes() && frames_postnet.sizes() == targets.sizes(),
               "synthesis loss: predicted frames ", frames.sizes(), " and ", frames_postnet.sizes(),
               " must have the targets' shape ", targets.sizes());
  MIXSEQ_CHECK(gate_logits.sizes() == gate_targets.sizes(), "synthesis loss: gate logits ", gate_logits.sizes(),
               " and gate targets ", gate_targets.sizes(), " differ in shape");
  MIXSEQ_CHECK(options.guided_attention_weight >= 0.0, "synthesis loss: guided_attention_weight must be >= 0, not ",
               options.guided_attention_weight);
  SynthesisLoss loss;
  const auto target = targets.to(frames.scalar_type());
  loss.mel = torch::mse_loss(frames, target) + torch::mse_loss(frames_postnet, target);
  loss.gate = torch::binary_cross_entropy_with_logits(gate_logits, gate_targets.to(gate_logits.scalar_type()));
  loss.total = loss.mel + loss.gate;
  loss.guided_attention = torch::zeros({}, frames.options());
  if (options.guided_attention_weight > 0.0) {
    MIXSEQ_CHECK(alignments.defined() && text_lengths.defined() && frame_lengths.defined() && alignments.dim() == 3,
                 "synthesis loss: the guided-attention term needs alignments [B, T, S] and the text and frame lengths");
    const auto w = guided_attention_weights(text_lengths, frame_lengths, alignments.size(1), alignments.size(2),
                                            options.guided_attention_sigma);  // [B, T, S]
    const auto cells = (text_lengths.to(torch::kFloat) * frame_lengths.to(torch::kFloat)).sum().clamp_min(1.0);
    loss.guided_attention = (alignments * w.to(alignments.scalar_type())).sum() / cells.to(alignments.device());
    loss.total = loss.total + options.guided_attention_weight * loss.guided_attention;
  }
  return loss;
}

AlignmentFigures alignment_figures(const torch::Tensor& alignments, const torch::Tensor& text_lengths,
                                   const torch::Tensor& frame_lengths) {
  MIXSEQ_CHECK(alignments.dim() == 3 && text_lengths.dim() == 1 && frame_lengths.dim() == 1 &&
                   text_lengths.size(0) == alignments.size(0) && frame_lengths.size(0) == alignments.size(0),
               "alignment figures: alignments must be [B, T, S] and the lengths [B], not ", alignments.sizes(), ", ",
               text_lengths.sizes(), " and ", frame_lengths.sizes());
  const auto a = alignments.detach().to(torch::kCPU, torch::kDouble);  // [B, T, S]
  const auto texts = text_lengths.to(torch::kCPU, torch::kLong);
  const auto frames = frame_lengths.to(torch::kCPU, torch::kLong);
  AlignmentFigures figures;
  for (int64_t b = 0; b < a.size(0); ++b) {
    const int64_t S = std::clamp<int64_t>(texts[b].item<int64_t>(), 1, a.size(2));
    const int64_t T = std::clamp<int64_t>(frames[b].item<int64_t>(), 0, a.size(1));
    ++figures.utterances;
    if (T == 0) continue;
    const auto weights = a[b].narrow(0, 0, T).narrow(1, 0, S);  // [T, S]
    figures.focus += std::get<0>(weights.max(1)).sum().item<double>();
    figures.steps += T;
    if (T < 2) continue;
    const auto mass = weights.sum(1);                                                         // [T]
    const auto position = (weights * torch::arange(S, weights.options())).sum(1) / mass.clamp_min(1e-12);  // [T]
    const auto step = torch::arange(T, weights.options());
    const auto dp = position - position.mean(), dt = step - step.mean();
    const double spread = std::sqrt((dp * dp).sum().item<double>() * (dt * dt).sum().item<double>());
    if (spread > 1e-9 * static_cast<double>(T)) figures.diagonal += (dp * dt).sum().item<double>() / spread;
  }
  return figures;
}

}  // namespace mixseq
