#include "mixseq/decode/beam_candidates.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "mixseq/nn/softmax_rows.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// The best candidates met so far, best first; a candidate enters only above the worst one kept
// (or while there is room), so most of a row costs one comparison an element.
class BestCandidates {
 public:
  BestCandidates(float* scores, int64_t* indices, int64_t count) : scores_(scores), indices_(indices), count_(count) {}

  // Callers offer indices in increasing order, so that a tie keeps the lower index first.
  void offer(float score, int64_t index) {
    if (full() && !(score > scores_[count_ - 1])) return;
    int64_t at = full() ? count_ - 1 : kept_++;
    for (; at > 0 && score > scores_[at - 1]; --at) {
      scores_[at] = scores_[at - 1];
      indices_[at] = indices_[at - 1];
    }
    scores_[at] = score;
    indices_[at] = index;
  }

  // Whether a candidate of this score would enter: while there is room, any; then only one above
  // the worst kept.
  bool would_take(float score) const { return !full() || score > scores_[count_ - 1]; }

  // The places left: -inf, with the lowest indices not kept whose token is not </s>.
  void fill_with_minus_infinity(int64_t vocab_size) {
    std::vector<int64_t> taken(indices_, indices_ + kept_);
    std::sort(taken.begin(), taken.end());
    for (int64_t index = 0; kept_ < count_; ++index) {
      if (index % vocab_size == kEosId || std::binary_search(taken.begin(), taken.end(), index)) continue;
      scores_[kept_] = kMinusInfinity;
      indices_[kept_++] = index;
    }
  }

 private:
  bool full() const { return kept_ == count_; }

  float* scores_;
  int64_t* indices_;
  int64_t count_;
  int64_t kept_ = 0;
};

// Tokens a scan passes over at a time, when their largest logit could not enter.
constexpr int64_t kScanBlock = 64;

// Offers a row's tokens [first, V) to `best` in increasing order, a block of kScanBlock tokens
// at a time: a block whose largest logit makes no candidate that would enter is passed over. The
// candidate score + (z - lse) only grows with z (rounding is monotonic), so the block's best
// candidate is that of its largest logit, and a block passed over holds none that would have
// entered: the kept candidates are exactly those of offering every token. A NaN logit stops the
// search earlier (the row's log-sum-exp is NaN).
void offer_row(BestCandidates& best, const float* z, int64_t first, int64_t vocab_size, float beam_score,
               float log_sum_exp, int64_t index_base) {
  const auto candidate = [&](float logit) { return beam_score + (logit - log_sum_exp); };
  int64_t token = first;
  for (; token + kScanBlock <= vocab_size; token += kScanBlock) {
    if (!best.would_take(candidate(biased_row_max(z + token, nullptr, kScanBlock)))) continue;
    for (int64_t t = token; t < token + kScanBlock; ++t) best.offer(candidate(z[t]), index_base + t);
  }
  for (; token < vocab_size; ++token) best.offer(candidate(z[token]), index_base + token);
}

}  // namespace

std::tuple<torch::Tensor, torch::Tensor> best_continuations(const torch::Tensor& logits_in, const torch::Tensor& scores_in,
                                                             int64_t beams, int64_t count,
                                                             const ContinuationRules& rules) {
  MIXSEQ_CHECK(logits_in.dim() == 2 && logits_in.device().is_cpu() && beams >= 1 && logits_in.size(0) % beams == 0,
               "best_continuations: logits must be [n·", beams, ", V] on the CPU, got ", logits_in.sizes(), " on ",
               logits_in.device());
  const int64_t rows = logits_in.size(0), vocab_size = logits_in.size(1), sentences = rows / beams;
  MIXSEQ_CHECK(scores_in.dim() == 1 && scores_in.size(0) == rows, "best_continuations: scores must be [", rows,
               "], got ", scores_in.sizes());
  MIXSEQ_CHECK(count >= 1 && count <= beams * (vocab_size - 1), "best_continuations: ", count,
               " candidates asked of ", beams, " beams of ", vocab_size, " tokens");
  MIXSEQ_CHECK(rules.only_eos.empty() || static_cast<int64_t>(rules.only_eos.size()) == sentences,
               "best_continuations: only_eos must have one entry per sentence (", sentences, "), got ",
               rules.only_eos.size());
  const auto logits = logits_in.to(at::kFloat).contiguous();
  const auto scores = scores_in.to(at::kCPU, at::kFloat).contiguous();
  auto best_scores = at::empty({sentences, count}, logits.options());
  auto best_indices = at::empty({sentences, count}, logits.options().dtype(at::kLong));
  const float* z = logits.data_ptr<float>();
  const float* beam_score = scores.data_ptr<float>();

  // About 32k logits a task: enough to pay for handing it to a thread.
  const int64_t grain = std::max<int64_t>(1, 32768 / (beams * vocab_size));
  at::parallel_for(0, sentences, grain, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      BestCandidates best(best_scores.data_ptr<float>() + j * count, best_indices.data_ptr<int64_t>() + j * count,
                          count);
      const bool only_eos = !rules.only_eos.empty() && rules.only_eos[j];
      for (int64_t beam = 0; beam < beams; ++beam) {
        const int64_t row = j * beams + beam;
        if (beam_score[row] == kMinusInfinity) continue;
        const float* row_logits = z + row * vocab_size;
        const float log_sum_exp = biased_log_sum_exp(row_logits, nullptr, vocab_size);
        MIXSEQ_CHECK(std::isfinite(log_sum_exp), "the model's logits of row ", row, " hold NaN or infinity");
        const auto candidate = [&](int64_t token) { return beam_score[row] + (row_logits[token] - log_sum_exp); };
        if (only_eos) {
          if (rules.eos_allowed) best.offer(candidate(kEosId), beam * vocab_size + kEosId);
          continue;
        }
        // The special ids 0-3 one by one (never <pad> or <s>; </s> where allowed), then the rest.
        for (int64_t token = 0; token <= kEosId && token < vocab_size; ++token) {
          if (token == kPadId || token == kBosId || (token == kEosId && !rules.eos_allowed)) continue;
          best.offer(candidate(token), beam * vocab_size + token);
        }
        offer_row(best, row_logits, kEosId + 1, vocab_size, beam_score[row], log_sum_exp, beam * vocab_size);
      }
      best.fill_with_minus_infinity(vocab_size);
    }
  });
  return {best_scores, best_indices};
}

}  // namespace mixseq
