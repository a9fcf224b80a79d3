// Label-smoothed cross-entropy over the vocabulary, the training loss of GNMT and the
// Transformer; with smoothing 0 it is the plain negative log-likelihood, the language-model
// loss (there is no separate LM loss function).
//
// Formula: NVIDIA's GNMT (DeepLearningExamples, PyTorch/Translation/GNMT/seq2seq/train/
// smoothing.py), for each target y that is not <pad>, with p = softmax(logits) over V entries:
//
//   loss_t = (1 - ε) · (-log p_y) + ε · (1/V) Σ_v (-log p_v)
//
// i.e. cross-entropy against the target distribution (1 - ε)·onehot(y) + ε/V (Szegedy et al.
// 2016, §7), the mean running over the whole vocabulary, <pad> and the target included. It is
// also PyTorch's cross_entropy(label_smoothing=ε). Current fairseq (criterions/
// label_smoothed_cross_entropy.py; older releases used the form above) spreads ε over the V - 1
// other entries instead: (1 - ε - ε/(V-1))·nll + ε/(V-1)·Σ_v(-log p_v). The two differ by
// O(ε/V) per token. GNMT is the first model trained here, so we follow NVIDIA's recipe, whose
// BLEU we want to reproduce.
//
// Everything is summed, not averaged, so that the trainer decides how to normalise (GNMT's
// reference divides by sentences, fairseq by tokens, both across gradient accumulation and
// ranks). The log-softmax is computed in fp32 whatever the dtype of the logits (fp16 or bf16
// log-probabilities lose the small differences the smoothing term is made of). On the CPU the
// loss and its gradient are each one pass over the logits (no [B, T, V] fp32 log-probabilities);
// the gradient has the logits' dtype, rounded once from fp32.
//
// Shapes: B batch, T target length, V vocabulary.
#pragma once

#include <ATen/core/Tensor.h>

#include "mixseq/util/config.h"

namespace mixseq {

struct LabelSmoothingOptions {
  double smoothing = 0.1;  // ε, probability mass moved from the target to a uniform distribution
                           // over the vocabulary (NVIDIA GNMT --smoothing 0.1); 0 = plain NLL

  void visit(ConfigVisitor& v) {
    v.field("smoothing", smoothing, "label smoothing epsilon; 0 = plain negative log-likelihood");
  }
};

struct CrossEntropySums {
  at::Tensor loss;    // [] fp32, Σ loss_t over non-pad targets; the value to backpropagate
  at::Tensor nll;     // [] fp32, no gradient, Σ -log p_y over non-pad targets; exp(nll / tokens)
                      // is the perplexity (equal to `loss` when smoothing is 0)
  at::Tensor tokens;  // [] int64, the number of non-pad targets
};

// logits [B, T, V] of any floating dtype, targets [B, T] int64 with kPadId where there is no
// target. The results live on the device of `logits`; nothing is copied to the host.
CrossEntropySums label_smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& targets,
                                              const LabelSmoothingOptions& options);

}  // namespace mixseq
