// DeepSpeech2 (Amodei et al. 2016) as MLPerf's reference builds it
// (retired_benchmarks/never-adopted/speech_recognition/pytorch/model.py): over a log spectrogram
// [B, 1, F, T],
//   conv2d 32 x (41 bins, 11 frames), stride (2, 2) -> batch norm -> hardtanh(0, 20)
//   conv2d 32 x (21 bins, 11 frames), stride (2, 1) -> batch norm -> hardtanh(0, 20)
//   `layers` bidirectional GRUs (or LSTMs) with biases, the two directions' outputs summed
//   (MLPerf) or concatenated
//   batch norm -> linear to V symbols without bias
// No padding in the convolutions: an utterance needs at least 31 frames (T' = (T - 11) / 2 + 1 - 10).
// Unlike the reference, the recurrent layers read packed sequences, so padding frames never reach
// a shorter utterance's backward direction (the parameters are the same).
// On the CPU, training and inference alike, the GRUs run through nn/gru_recurrence.h (forward
// and backward written out, without LibTorch's per-step operators; in fp32 under bf16 autocast).
// Inference (eval mode, autograd off, fp32 on the CPU, autocast off) also computes the second
// convolution with FFTs, its batch norm folded in (nn/spectral_conv2d.h): the same values up to
// float rounding, with 35x fewer multiply-adds in that convolution.
#pragma once

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mixseq/models/speech_recognizer.h"
#include "mixseq/nn/spectral_conv2d.h"
#include "mixseq/util/config.h"

namespace mixseq {

struct DeepSpeech2Config {
  int64_t in_feats = 161;         // F: spectrogram bins (the speech task sets it from its features)
  int64_t conv_channels = 32;     // channels of both 2-D convolutions
  std::string rnn_type = "gru";   // gru or lstm
  int64_t hidden = 800;           // units per direction of each recurrent layer
  int64_t layers = 5;             // recurrent layers
  bool bidirectional = true;      // false: forward direction only
  bool sum_directions = true;     // true: the directions' outputs are summed (MLPerf); false: concatenated

  void visit(ConfigVisitor& v) {
    v.field("in_feats", in_feats, "spectrogram bins (set from the speech task's features)");
    v.field("conv_channels", conv_channels, "channels of the two 2-D convolutions");
    v.choice("rnn_type", rnn_type, {"gru", "lstm"}, "recurrent cell");
    v.field("hidden", hidden, "units per direction of each recurrent layer");
    v.field("layers", layers, "recurrent layers");
    v.field("bidirectional", bidirectional, "bidirectional recurrent layers");
    v.field("sum_directions", sum_directions, "sum (true) or concatenate (false) the two directions' outputs");
  }
};

class DeepSpeech2ModelImpl : public SpeechRecognizerImpl {
 public:
  DeepSpeech2ModelImpl(const DeepSpeech2Config& config, int64_t vocab_size);

  CtcOutput forward(const torch::Tensor& features, const torch::Tensor& lengths) override;
  int64_t feature_bins() const override { return config_.in_feats; }
  int64_t output_frames(int64_t frames) const override;

 private:
  DeepSpeech2Config config_;
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::BatchNorm2d norm1_{nullptr}, norm2_{nullptr};
  std::vector<torch::nn::GRU> grus_;
  std::vector<torch::nn::LSTM> lstms_;
  torch::nn::BatchNorm1d output_norm_{nullptr};
  torch::nn::Linear output_{nullptr};

  // The second convolution with its batch norm as one spectral plan, for inference; remade when a
  // version of the six tensors it comes from changes. Guarded by plan_mutex_ (concurrent forwards).
  torch::Tensor spectral_conv2(const torch::Tensor& x);
  std::shared_ptr<const SpectralConv2dPlan> conv2_plan_;
  std::vector<int64_t> conv2_versions_;
  std::mutex plan_mutex_;
};

}  // namespace mixseq
