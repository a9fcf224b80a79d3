// Pooling a padded batch of sequences into one vector per sequence, as a sentence classifier reads
// its encoder's states (ULMFiT's concat pooling, Howard & Ruder 2018, §3.3).
//
// Shapes: B rows, T positions, D state width. Row b holds lengths[b] states (1 <= lengths[b] <= T)
// followed by padding, which no pooling reads.
#pragma once

#include <torch/types.h>

#include <string>

namespace mixseq {

enum class SequencePooling {
  kLast,    // the state at position lengths[b] - 1                       [B, D]
  kMean,    // the mean over the row's positions                          [B, D]
  kMax,     // the elementwise maximum over the row's positions           [B, D]
  kConcat,  // [last; max; mean]                                           [B, 3 D]
};

// "last", "mean", "max" or "concat"; throws mixseq::Error naming `key` for another name.
SequencePooling sequence_pooling(const std::string& name, const std::string& key);

// The width of the pooled vector for states of width D.
int64_t pooled_size(SequencePooling pooling, int64_t state_size);

// states [B, T, D], lengths [B] int64 (on any device) -> the pooled vectors, in the states' dtype.
// Differentiable; throws mixseq::Error for a length outside [1, T].
torch::Tensor pool_sequences(const torch::Tensor& states, const torch::Tensor& lengths, SequencePooling pooling);

}  // namespace mixseq
