// Tacotron 2's postnet (Shen et al. 2018, §2.2; DeepLearningExamples' Postnet): n 1-D convolutions
// over time, each followed by batch norm; tanh after all but the last; dropout after every one in
// training. It predicts a residual added to the decoder's frames. [B, F, T] -> [B, F, T], F the
// frame bins.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include <cstdint>

namespace mixseq {

struct ConvPostnetOptions {
  int64_t channels = 80;        // F: bins of the frames in and out
  int64_t hidden = 512;         // channels between the convolutions
  int64_t kernel_size = 5;      // odd: frames keep their count
  int64_t convolutions = 5;     // at least 2 (the first and the last)
  double dropout = 0.5;         // after each convolution, in training only; 0 disables
};

class ConvPostnetImpl : public torch::nn::Module {
 public:
  explicit ConvPostnetImpl(const ConvPostnetOptions& options);
  torch::Tensor forward(torch::Tensor x);  // [B, F, T] -> [B, F, T]

  // Each a Sequential of (glorot_conv1d, BatchNorm1d): gain tanh, and linear for the last.
  torch::nn::ModuleList convolutions{nullptr};

 private:
  double dropout_;
};
TORCH_MODULE(ConvPostnet);

}  // namespace mixseq
