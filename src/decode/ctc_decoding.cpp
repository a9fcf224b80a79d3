#include "mixseq/decode/ctc_decoding.h"

#include "mixseq/util/error.h"

namespace mixseq {

std::vector<CtcHypothesis> ctc_greedy_decode(const torch::Tensor& logits, const torch::Tensor& lengths) {
  MIXSEQ_CHECK(logits.dim() == 3 && lengths.numel() == logits.size(0), "ctc_greedy_decode: logits [B, T, V] and [B] "
               "lengths, not ", logits.sizes(), " and ", lengths.sizes());
  const auto best = logits.argmax(-1).to(torch::kCPU, torch::kLong).contiguous();  // [B, T']
  const auto frames = lengths.to(torch::kCPU, torch::kLong).contiguous();
  const auto ids = best.accessor<int64_t, 2>();
  std::vector<CtcHypothesis> hypotheses(static_cast<size_t>(best.size(0)));
  for (int64_t b = 0; b < best.size(0); ++b) {
    CtcHypothesis& h = hypotheses[static_cast<size_t>(b)];
    int64_t previous = kCtcBlankId;
    const int64_t length = std::min(frames[b].item<int64_t>(), best.size(1));
    for (int64_t t = 0; t < length; ++t) {
      const int64_t id = ids[b][t];
      if (id != kCtcBlankId && id != previous) {
        h.symbols.push_back(id);
        h.first_frame.push_back(t);
        h.last_frame.push_back(t);
      } else if (id != kCtcBlankId && id == previous) {
        h.last_frame.back() = t;
      }
      previous = id;
    }
  }
  return hypotheses;
}

std::vector<TimedWord> ctc_words(const CtcHypothesis& hypothesis, const CtcSymbols& symbols, double frame_seconds) {
  std::vector<TimedWord> words;
  bool open = false;
  for (size_t i = 0; i < hypothesis.symbols.size(); ++i) {
    std::string_view symbol = symbols.symbol(hypothesis.symbols[i]);
    if (!symbol.empty() && symbol.front() == ' ') {  // the space, or a piece that begins a word
      open = false;
      symbol.remove_prefix(1);
      if (symbol.empty()) continue;
    }
    if (!open) {
      words.push_back({"", static_cast<double>(hypothesis.first_frame[i]) * frame_seconds, 0});
      open = true;
    }
    words.back().word += symbol;
    words.back().end = static_cast<double>(hypothesis.last_frame[i] + 1) * frame_seconds;
  }
  return words;
}

}  // namespace mixseq
