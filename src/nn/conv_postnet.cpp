#include "mixseq/nn/conv_postnet.h"

#include <torch/torch.h>

#include "mixseq/nn/glorot_layers.h"
#include "mixseq/util/error.h"

namespace mixseq {

ConvPostnetImpl::ConvPostnetImpl(const ConvPostnetOptions& o) : dropout_(o.dropout) {
  MIXSEQ_CHECK(o.convolutions >= 2, "postnet: needs at least 2 convolutions, not ", o.convolutions);
  MIXSEQ_CHECK(o.kernel_size >= 1 && o.kernel_size % 2 == 1, "postnet: kernel_size must be odd, not ", o.kernel_size);
  convolutions = register_module("convolutions", torch::nn::ModuleList());
  for (int64_t i = 0; i < o.convolutions; ++i) {
    const bool last = i == o.convolutions - 1;
    const int64_t in = i == 0 ? o.channels : o.hidden, out = last ? o.channels : o.hidden;
    convolutions->push_back(torch::nn::Sequential(glorot_conv1d(in, out, o.kernel_size, true, last ? "linear" : "tanh"),
                                                  torch::nn::BatchNorm1d(out)));
  }
}

torch::Tensor ConvPostnetImpl::forward(torch::Tensor x) {  // [B, F, T]
  const size_t n = convolutions->size();
  for (size_t i = 0; i < n; ++i) {
    x = convolutions[i]->as<torch::nn::Sequential>()->forward(x);  // [B, hidden or F, T]
    if (i + 1 < n) x = torch::tanh(x);
    if (dropout_ > 0.0) x = torch::dropout(x, dropout_, is_training());
  }
  return x;  // [B, F, T]
}

}  // namespace mixseq
