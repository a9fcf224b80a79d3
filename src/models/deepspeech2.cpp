#include "mixseq/models/deepspeech2.h"

#include <torch/nn/utils/rnn.h>

#include "mixseq/nn/batch_norm_affine.h"
#include "mixseq/nn/clipped_relu.h"
#include "mixseq/nn/conv2d_float_weight_gradient.h"
#include "mixseq/nn/gru_recurrence.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

int64_t conv_frequency_bins(int64_t bins) { return ((bins - 41) / 2 + 1 - 21) / 2 + 1; }

}  // namespace

DeepSpeech2ModelImpl::DeepSpeech2ModelImpl(const DeepSpeech2Config& config, int64_t vocab_size) : config_(config) {
  const auto& c = config_;
  MIXSEQ_CHECK(c.in_feats >= 81, "deepspeech2 needs at least 81 feature bins (its convolutions span 41 and 21), not ",
               c.in_feats);
  MIXSEQ_CHECK(c.conv_channels >= 1 && c.hidden >= 1 && c.layers >= 1 && vocab_size >= 2,
               "deepspeech2: conv_channels (", c.conv_channels, "), hidden (", c.hidden, "), layers (", c.layers,
               ") and the symbols (", vocab_size, ") must be positive");
  conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, c.conv_channels, {41, 11}).stride({2, 2})));
  norm1_ = register_module("norm1", torch::nn::BatchNorm2d(c.conv_channels));
  conv2_ = register_module(
      "conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(c.conv_channels, c.conv_channels, {21, 11}).stride({2, 1})));
  norm2_ = register_module("norm2", torch::nn::BatchNorm2d(c.conv_channels));
  int64_t in = conv_frequency_bins(c.in_feats) * c.conv_channels;
  const int64_t out_width = c.bidirectional && !c.sum_directions ? 2 * c.hidden : c.hidden;
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string name = "rnn" + std::to_string(l);
    if (c.rnn_type == "gru")
      grus_.push_back(register_module(name, torch::nn::GRU(torch::nn::GRUOptions(in, c.hidden).bidirectional(c.bidirectional))));
    else
      lstms_.push_back(register_module(name, torch::nn::LSTM(torch::nn::LSTMOptions(in, c.hidden).bidirectional(c.bidirectional))));
    in = out_width;
  }
  output_norm_ = register_module("output_norm", torch::nn::BatchNorm1d(out_width));
  output_ = register_module("output", torch::nn::Linear(torch::nn::LinearOptions(out_width, vocab_size).bias(false)));
}

torch::Tensor DeepSpeech2ModelImpl::spectral_conv2(const torch::Tensor& x) {
  auto& conv = *conv2_;
  auto& norm = *norm2_;
  const std::vector<int64_t> versions = {conv.weight._version(),       conv.bias._version(),
                                         norm.weight._version(),       norm.bias._version(),
                                         norm.running_mean._version(), norm.running_var._version()};
  std::shared_ptr<const SpectralConv2dPlan> plan;
  {
    std::lock_guard<std::mutex> lock(plan_mutex_);
    if (!conv2_plan_ || conv2_versions_ != versions || conv2_plan_->height != x.size(2)) {
      const auto affine = batch_norm_affine(norm);  // after the convolution's own bias
      // FFT width 64: segments of 54 output frames for the 11-frame kernel
      conv2_plan_ = std::make_shared<const SpectralConv2dPlan>(plan_spectral_conv2d(
          conv.weight, x.size(2), conv.options.stride()->at(0), 64, affine.scale, conv.bias * affine.scale + affine.shift));
      conv2_versions_ = versions;
    }
    plan = conv2_plan_;
  }
  return spectral_conv2d(x, *plan);
}

int64_t DeepSpeech2ModelImpl::output_frames(int64_t frames) const {
  if (frames < 11) return 0;
  return (frames - 11) / 2 + 1 - 10;
}

CtcOutput DeepSpeech2ModelImpl::forward(const torch::Tensor& features, const torch::Tensor& lengths) {
  MIXSEQ_CHECK(features.dim() == 3 && features.size(2) == config_.in_feats, "deepspeech2: features must be [B, T, ",
               config_.in_feats, "], not ", features.sizes());
  MIXSEQ_CHECK(features.size(1) >= 31, "deepspeech2 needs at least 31 frames, not ", features.size(1));
  auto x = features.transpose(1, 2).unsqueeze(1);  // [B, 1, F, T]
  // One input channel: its weight gradient in fp32 under bf16 autocast (nn/conv2d_float_weight_gradient.h)
  const auto& c1 = conv1_->options;
  x = conv2d_float_weight_gradient(x, conv1_->weight, conv1_->bias, *c1.stride(),
                                   c10::get<torch::ExpandingArray<2>>(c1.padding()));
  x = clipped_relu(norm1_->forward(x), 20.0);
  const bool inference = runs_inference(x);
  x = inference ? spectral_conv2(x).clamp_(0.0, 20.0) : clipped_relu(norm2_->forward(conv2_->forward(x)), 20.0);
  // x: [B, C, F', T']
  const int64_t batch = x.size(0), frames = x.size(3);
  x = x.reshape({batch, x.size(1) * x.size(2), frames}).permute({2, 0, 1}).contiguous();  // [T', B, C F']
  auto out_lengths = ((lengths.to(torch::kLong).cpu() - 11).floor_divide(2) + 1 - 10).clamp(1, frames);
  // Packed sequences only where lengths differ: with equal lengths the padded run is the same
  // computation, without the packed path's per-step bookkeeping.
  const bool equal_lengths = (out_lengths == frames).all().item<bool>();
  for (size_t l = 0; l < std::max(grus_.size(), lstms_.size()); ++l) {
    std::vector<GruWeights> gru_weights;
    if (!grus_.empty()) {  // nn/gru_recurrence.h; all_weights(): w_ih, w_hh, b_ih, b_hh per direction
      const auto w = grus_[l]->all_weights();
      for (size_t d = 0; d + 3 < w.size(); d += 4) gru_weights.push_back({w[d], w[d + 1], w[d + 2], w[d + 3]});
    }
    if (!gru_weights.empty() && gru_recurrence_applies(x, gru_weights)) {
      x = gru_recurrence(x, out_lengths, gru_weights);  // [T', B, D H]
    } else if (equal_lengths) {
      x = !grus_.empty() ? std::get<0>(grus_[l]->forward(x)) : std::get<0>(lstms_[l]->forward(x));  // [T', B, D H]
    } else {
      auto packed = torch::nn::utils::rnn::pack_padded_sequence(x, out_lengths, /*batch_first=*/false,
                                                                /*enforce_sorted=*/false);
      const auto result = !grus_.empty() ? std::get<0>(grus_[l]->forward_with_packed_input(packed))
                                         : std::get<0>(lstms_[l]->forward_with_packed_input(packed));
      x = std::get<0>(torch::nn::utils::rnn::pad_packed_sequence(result, false, 0.0, frames));  // [T', B, D H]
    }
    if (config_.bidirectional && config_.sum_directions) x = x.view({frames, batch, 2, config_.hidden}).sum(2);
  }
  const int64_t width = x.size(2);
  auto y = output_->forward(output_norm_->forward(x.view({frames * batch, width}))).view({frames, batch, -1});
  return {y.transpose(0, 1), out_lengths.to(features.device())};
}

}  // namespace mixseq
