// The CTC loss (Graves et al. 2006) of a speech recognizer's outputs, with LibTorch's ctc_loss
// (blank id 0). An utterance whose transcript cannot be aligned with its output frames (fewer
// frames than symbols plus repeated neighbours) has an infinite loss: it is zeroed, with its
// gradient, and counted, as Jasper and NeMo do (zero_infinity), rather than poisoning the update.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace mixseq {

struct CtcLossSums {
  torch::Tensor loss;           // [] fp32 summed over the utterances, with its graph
  int64_t utterances = 0;       // utterances summed over (the infeasible ones included, with loss 0)
  int64_t infeasible = 0;       // utterances whose loss was infinite, zeroed
};

// The frames CTC needs to emit `targets`: their count plus one blank between each pair of equal
// neighbours.
int64_t ctc_min_frames(const std::vector<int64_t>& targets);

// logits [B, T', V] (any float type), lengths [B] int64 output frames, targets: the B transcripts'
// symbol ids (none is the blank).
CtcLossSums ctc_loss_sums(const torch::Tensor& logits, const torch::Tensor& lengths,
                          const std::vector<std::vector<int64_t>>& targets);

}  // namespace mixseq
