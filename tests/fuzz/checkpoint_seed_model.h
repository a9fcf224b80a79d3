// The tiny model and optimizer that fuzz_checkpoint loads checkpoints into, and that
// make_checkpoint_seed saves the seed checkpoint of corpus/checkpoint/ from.
#pragma once

#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>

namespace mixseq::fuzz {

inline torch::nn::Linear make_seed_model() { return torch::nn::Linear(2, 3); }

inline torch::optim::Adam make_seed_optimizer(torch::nn::Linear& model) {
  return torch::optim::Adam(model->parameters(), torch::optim::AdamOptions(1e-3));
}

}  // namespace mixseq::fuzz
