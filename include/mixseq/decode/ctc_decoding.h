// CTC decoding of a speech recognizer's outputs (models/speech_recognizer.h).
//
// Greedy: the most likely symbol of each frame, repeats merged, blanks dropped (Jasper's
// GreedyCTCDecoder plus its gather_predictions). Each emitted symbol keeps the frames it spans,
// from which words get start and end times.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/text/ctc_symbols.h"

namespace mixseq {

struct CtcHypothesis {
  std::vector<int64_t> symbols;      // symbol ids, no blanks, repeats merged
  std::vector<int64_t> first_frame;  // per symbol: the first output frame it was emitted at
  std::vector<int64_t> last_frame;   // per symbol: the last output frame of its run
};

// logits [B, T', V], lengths [B] -> one hypothesis per utterance.
std::vector<CtcHypothesis> ctc_greedy_decode(const torch::Tensor& logits, const torch::Tensor& lengths);

struct TimedWord {
  std::string word;
  double start = 0;  // seconds
  double end = 0;    // seconds
};

// The words of a hypothesis (split at the space symbol) with times: `frame_seconds` is the duration
// of one output frame (feature hop x the model's time reduction).
std::vector<TimedWord> ctc_words(const CtcHypothesis& hypothesis, const CtcSymbols& symbols, double frame_seconds);

}  // namespace mixseq
