#include "mixseq/nn/prenet.h"

#include <torch/torch.h>

#include "mixseq/nn/glorot_layers.h"
#include "mixseq/util/error.h"

namespace mixseq {

PrenetImpl::PrenetImpl(const PrenetOptions& options) : dropout_(options.dropout) {
  MIXSEQ_CHECK(!options.sizes.empty(), "prenet: needs at least one layer");
  MIXSEQ_CHECK(options.dropout >= 0.0 && options.dropout < 1.0, "prenet: dropout must be in [0, 1), not ",
               options.dropout);
  layers = register_module("layers", torch::nn::ModuleList());
  int64_t in = options.in_dim;
  for (const int64_t size : options.sizes) {
    layers->push_back(glorot_linear(in, size, /*bias=*/false));
    in = size;
  }
}

torch::Tensor PrenetImpl::forward(torch::Tensor x) {
  for (const auto& layer : *layers) {
    x = torch::relu(layer->as<torch::nn::Linear>()->forward(x));
    if (dropout_ > 0.0) x = torch::dropout(x, dropout_, /*train=*/true);  // on at inference too
  }
  return x;
}

}  // namespace mixseq
