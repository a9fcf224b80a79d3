// The loss of one segment of text under a language model: the forward pass under autocast with
// the previous segment's memory, and -log p of every target summed. Language-model training
// (train/language_model_task.h), evaluation (decode/lm_evaluation.h, `mixseq lm-eval`) and
// `mixseq bench train` all take it from here. It sits beside the model rather than beside
// train/translation_loss.h because evaluation, on the same rung of the ladder as training,
// needs it too.
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "mixseq/models/language_model.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct LanguageModelLoss {
  torch::Tensor nll_sum;  // [] fp32: -log p summed over the segment's targets (0 at kPadId), with its
                          // graph unless the caller holds a torch::NoGradGuard
  int64_t targets = 0;    // positions summed over: B * T
  LmMemory memory;        // for the next segment of the same rows
  torch::Tensor token_nll;  // [B, T] fp32: the terms of nll_sum
  torch::Tensor states;     // [B, T, D'] LmOutput::states
};

// input, target: [B, T] ids on `device`; `memory`: what the previous segment of the same rows
// returned (empty for the first).
LanguageModelLoss language_model_loss(LanguageModelImpl& model, const torch::Tensor& input, const torch::Tensor& target,
                                      const LmMemory& memory, Precision precision, const torch::Device& device);

}  // namespace mixseq
