// token_nll: -log softmax(logits)[target] for every row, each token's own value (a language
// model's per-token NLL, models/language_model.h), forward and backward each in one pass over the
// logits on the CPU.
//
// Why not log_softmax + nll_loss: they build the [N, V] fp32 log-probabilities (for bf16 logits
// after a widening copy), and backward fills an [N, V] zero gradient for nll_loss, runs
// log_softmax's backward over it and (bf16) narrows the result: a third of word_language_model's
// training step at its bench shape (vocabulary 10,000, 700 tokens) went there. Here forward keeps
// one log Σ_v exp(z_v) per row (nn/softmax_rows.h; bf16 rows widened by nn/bf16_rows.h) and
// backward writes d/dz_v = g (p_v - [v = target]) straight into a gradient of the logits' dtype,
// recomputing p from the logits. criteria/label_smoothed_cross_entropy.h does the same for a
// summed, smoothed loss.
//
// Off the CPU (and for empty inputs) it is LibTorch's log_softmax and nll_loss.
#pragma once

#include <torch/types.h>

#include "mixseq/text/vocabulary.h"

namespace mixseq {

// logits [N, V] of any floating dtype, targets [N] int64 in [0, V) -> [N] fp32 (fp64 for fp64
// logits): -log p(targets[n]), 0 where targets[n] is ignore_index (by default kPadId,
// text/vocabulary.h; a negative one ignores nothing, for columns that are not token ids, as an
// adaptive softmax's), with p the softmax of logits + bias when a bias [V] is given.
// Differentiable in logits and bias.
//
// Why the bias here and not in the product before (at::linear): addmm first copies the bias into
// every row of its [N, V] output, a fifth of an LSTM LM's evaluation segment at vocabulary
// 10,000; here it is added to each row while the row is read anyway, in fp32 (the arithmetic's
// dtype) even when the logits are bf16, and its gradient is summed in the same backward pass.
torch::Tensor token_nll(const torch::Tensor& logits, const torch::Tensor& targets,
                        const torch::Tensor& bias = torch::Tensor(), int64_t ignore_index = kPadId);

}  // namespace mixseq
