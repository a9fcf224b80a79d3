// Tacotron's prenet (Wang et al. 2017; Tacotron 2, Shen et al. 2018, §2.2): linear layers without
// bias, each followed by ReLU and dropout that stays on at inference too ("to introduce output
// variation at inference time", the paper says; DeepLearningExamples' Prenet calls
// F.dropout(training=True) always). [..., in] -> [..., sizes.back()].
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include <cstdint>
#include <vector>

namespace mixseq {

struct PrenetOptions {
  int64_t in_dim = 80;                     // input width (mel bins x frames per step)
  std::vector<int64_t> sizes{256, 256};    // width of each layer
  double dropout = 0.5;                    // after each ReLU, in training and inference alike; 0 disables
};

class PrenetImpl : public torch::nn::Module {
 public:
  explicit PrenetImpl(const PrenetOptions& options);
  torch::Tensor forward(torch::Tensor x);  // [..., in_dim] -> [..., sizes.back()]

  torch::nn::ModuleList layers{nullptr};   // glorot_linear, no bias, gain linear (as the reference)

 private:
  double dropout_;
};
TORCH_MODULE(Prenet);

}  // namespace mixseq
