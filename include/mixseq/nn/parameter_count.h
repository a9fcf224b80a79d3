// The number of trainable values in a module, for logs and for checking an architecture
// against its reference.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>

namespace mixseq {

// Sum of numel() over module.parameters(), each tensor counted once even when it is
// registered under several names.
int64_t count_parameters(const torch::nn::Module& module);

}  // namespace mixseq
