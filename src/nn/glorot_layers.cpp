#include "mixseq/nn/glorot_layers.h"

#include <torch/nn/init.h>

#include <cmath>

#include "mixseq/util/error.h"

namespace mixseq {

double glorot_gain(const std::string& nonlinearity) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid") return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  throw Error(str_cat("glorot_gain: unknown nonlinearity '", nonlinearity, "'; known: linear, sigmoid, tanh, relu"));
}

torch::nn::Linear glorot_linear(int64_t in_features, int64_t out_features, bool bias, const std::string& nonlinearity) {
  torch::nn::Linear linear(torch::nn::LinearOptions(in_features, out_features).bias(bias));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(linear->weight, glorot_gain(nonlinearity));
  return linear;
}

torch::nn::Conv1d glorot_conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, bool bias,
                                const std::string& nonlinearity) {
  torch::nn::Conv1d conv(
      torch::nn::Conv1dOptions(in_channels, out_channels, kernel_size).padding((kernel_size - 1) / 2).bias(bias));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(conv->weight, glorot_gain(nonlinearity));
  return conv;
}

}  // namespace mixseq
