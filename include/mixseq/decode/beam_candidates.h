// A search step's best continuations of each sentence, in one pass over the model's logits on
// the CPU.
//
// Through LibTorch a step is a [rows, V] log-softmax, fills for the forbidden tokens, the beam
// scores added into another [rows, V] tensor and a topk that sorts each sentence's K x V
// candidates (8% of an int8 Transformer's beam search at the bench shapes). Here each row's
// log-sum-exp comes from nn/softmax_rows.h (two sweeps that store nothing) and one scan keeps the
// best candidates of a sentence against the worst one kept so far, a block of 64 tokens at a time:
// a block whose largest logit could not enter is passed over after one vectorized maximum, which
// is most of them once the best are kept. The kept candidates are exactly those of offering every
// token.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <tuple>
#include <vector>

namespace mixseq {

// What a sentence may add at this step: never <pad> or <s>.
struct ContinuationRules {
  bool eos_allowed = true;      // false before min_len and with suppress_eos
  std::vector<bool> only_eos;   // per sentence, or empty for none: at its max_len, </s> is all it may add
};

// logits [n·K, V] (float, CPU; rows j·K .. j·K + K-1 are sentence j's K beams); scores [n·K]
// float, each beam's log-probability so far (-inf: a beam that is not there).
// -> the best `count` of each sentence's K·V candidates score + log_softmax(logits), [n, count]
// float in descending order (ties: the lower index first), and their indices [n, count] int64,
// beam·V + token. Where fewer than `count` candidates are allowed and alive, the rest are -inf
// with distinct indices of tokens other than </s>.
std::tuple<torch::Tensor, torch::Tensor> best_continuations(const torch::Tensor& logits, const torch::Tensor& scores,
                                                             int64_t beams, int64_t count,
                                                             const ContinuationRules& rules);

}  // namespace mixseq
