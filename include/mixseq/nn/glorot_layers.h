// Tacotron 2's LinearNorm and ConvNorm (NVIDIA DeepLearningExamples, tacotron2_common/layers.py):
// LibTorch's Linear and Conv1d whose weights start xavier_uniform (Glorot & Bengio 2010) scaled by
// torch.nn.init.calculate_gain(nonlinearity) of the activation that follows; biases keep LibTorch's
// default initialisation (uniform in +-1/sqrt(fan_in)), as theirs keep PyTorch's.
#pragma once

#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <string>

namespace mixseq {

// torch.nn.init.calculate_gain for "linear" (1), "sigmoid" (1), "tanh" (5/3), "relu" (sqrt 2);
// throws mixseq::Error for other names.
double glorot_gain(const std::string& nonlinearity);

// in -> out features, the weight xavier_uniform with glorot_gain(nonlinearity).
torch::nn::Linear glorot_linear(int64_t in_features, int64_t out_features, bool bias = true,
                                const std::string& nonlinearity = "linear");

// [B, in, T] -> [B, out, T'] convolution, stride 1, padding (kernel - 1) / 2 (so T' = T for an odd
// kernel), the weight xavier_uniform with glorot_gain(nonlinearity).
torch::nn::Conv1d glorot_conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, bool bias = true,
                                const std::string& nonlinearity = "linear");

}  // namespace mixseq
