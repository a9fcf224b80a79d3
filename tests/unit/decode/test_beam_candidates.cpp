// best_continuations against LibTorch's log_softmax, fills and topk.
#include "mixseq/decode/beam_candidates.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "mixseq/nn/softmax_rows.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The rules as the search applied them through LibTorch: -inf where a token is not allowed.
at::Tensor allowed_log_probs(const at::Tensor& logits, int64_t beams, const ContinuationRules& rules) {
  auto lprobs = at::log_softmax(logits, -1);
  lprobs.select(1, kPadId).fill_(-kInf);
  lprobs.select(1, kBosId).fill_(-kInf);
  if (!rules.eos_allowed) lprobs.select(1, kEosId).fill_(-kInf);
  for (size_t j = 0; j < rules.only_eos.size(); ++j) {
    if (!rules.only_eos[j]) continue;
    auto rows = lprobs.narrow(0, static_cast<int64_t>(j) * beams, beams);
    const auto eos = rows.select(1, kEosId).clone();
    rows.fill_(-kInf);
    rows.select(1, kEosId).copy_(eos);
  }
  return lprobs;
}

// Sentences of K = 3 beams over a vocabulary of 300 (over a SIMD width, not a multiple of it):
// a dead beam (-inf), a sentence at its max_len, and one whose beams all are dead.
TEST(BestContinuations, EqualLogSoftmaxPlusScoresThenTopk) {
  at::manual_seed(3);
  const int64_t sentences = 5, beams = 3, vocab = 300, count = 2 * beams;
  auto logits = at::randn({sentences * beams, vocab}) * 3;
  logits.select(1, kEosId) += 6;  // </s> among the best wherever it is allowed
  logits[0][kPadId] = 20;         // and <pad> and <s> the best if they were
  logits[3][kBosId] = 20;
  auto scores = -at::rand({sentences * beams}) * 10;
  scores[1] = -kInf;
  scores.narrow(0, 4 * beams, beams).fill_(-kInf);
  for (const bool eos_allowed : {true, false}) {
    ContinuationRules rules;
    rules.eos_allowed = eos_allowed;
    rules.only_eos = {false, false, true, false, false};
    const auto [best, indices] = best_continuations(logits, scores, beams, count, rules);
    const auto candidates = (scores.unsqueeze(1) + allowed_log_probs(logits, beams, rules)).view({sentences, -1});
    const auto [expected, expected_indices] = candidates.topk(count);
    const std::string name = eos_allowed ? "eos allowed" : "no eos";
    ASSERT_EQ(best.sizes(), expected.sizes()) << name;
    EXPECT_TRUE(at::allclose(best, expected, 1e-5, 1e-5)) << name << "\n" << best << expected;
    const auto finite = at::isfinite(expected);  // where LibTorch picks among -inf ties at will
    EXPECT_TRUE(at::equal(indices.masked_select(finite), expected_indices.masked_select(finite))) << name;
    // The -inf places: distinct, never </s>, and -inf for LibTorch too.
    for (int64_t j = 0; j < sentences; ++j) {
      std::set<int64_t> seen;
      for (int64_t c = 0; c < count; ++c) {
        const int64_t index = indices[j][c].item<int64_t>();
        EXPECT_TRUE(seen.insert(index).second) << name << ": sentence " << j << " repeats " << index;
        if (best[j][c].item<float>() != -kInf) continue;
        EXPECT_NE(index % vocab, kEosId) << name;
        EXPECT_EQ(candidates[j][index].item<float>(), -kInf) << name;
      }
    }
  }
  // The sentence at its max_len keeps </s> alone, each live beam's.
  ContinuationRules rules;
  rules.only_eos = {false, false, true, false, false};
  const auto [best, indices] = best_continuations(logits, scores, beams, count, rules);
  for (int64_t c = 0; c < beams; ++c) EXPECT_EQ(indices[2][c].item<int64_t>() % vocab, kEosId);
  EXPECT_EQ(best[2][beams].item<float>(), -kInf);
}

TEST(BestContinuations, KeepsTheLowerIndexOfEqualScoresAndGreedyIsTheArgmax) {
  auto logits = at::zeros({2, 8});
  logits[0][5] = 1;  // the rest of each row ties
  logits[1][6] = 2;
  const auto [best, indices] = best_continuations(logits, at::zeros({2}), /*beams=*/2, /*count=*/3, {});
  EXPECT_EQ(indices[0][0].item<int64_t>(), 8 + 6);  // row 1's token 6 beats row 0's token 5
  EXPECT_EQ(indices[0][1].item<int64_t>(), 5);
  EXPECT_EQ(indices[0][2].item<int64_t>(), 1);  // <unk>: 0 and 2 are never chosen, 3 ties later
  const auto log_probs = at::log_softmax(logits, -1);
  const auto [greedy, token] = best_continuations(logits, at::zeros({2}), /*beams=*/1, /*count=*/1, {});
  EXPECT_TRUE(at::allclose(greedy.flatten(), std::get<0>(log_probs.max(1)), 1e-6, 1e-6));
  EXPECT_TRUE(at::equal(token.flatten(), at::tensor({5, 6}, at::kLong)));
}

// The scan passes over blocks of tokens that hold no candidate to keep: what it keeps must be
// exactly what offering every token keeps. Logits on a coarse grid (many exact ties, inside
// blocks and across them), a vocabulary that is not a multiple of the block, a beam whose best
// tokens sit in its last, partial block, and counts from 1 to more than a row's worth of ties:
// scores and indices equal, bit for bit, to a stable sort of every allowed candidate (the score
// computed as the search computes it, ties to the lower index).
TEST(BestContinuations, PassingOverBlocksKeepsExactlyWhatEveryTokenWouldGive) {
  at::manual_seed(5);
  const int64_t sentences = 3, beams = 4, vocab = 1000;
  auto logits = (at::randn({sentences * beams, vocab}) * 2).round() / 2;  // steps of 0.5
  logits[5].narrow(0, 960, 40) += 8;                                   // the tail holds row 5's best
  const auto scores = (-at::rand({sentences * beams}) * 4).round();     // ties between beams too
  for (const int64_t count : {1, 3, 8, 40}) {
    const auto [best, indices] = best_continuations(logits, scores, beams, count, {});
    for (int64_t j = 0; j < sentences; ++j) {
      std::vector<std::pair<float, int64_t>> all;  // (score, index) of every allowed candidate
      for (int64_t beam = 0; beam < beams; ++beam) {
        const int64_t row = j * beams + beam;
        const float* z = logits[row].data_ptr<float>();
        const float lse = biased_log_sum_exp(z, nullptr, vocab);
        const float beam_score = scores[row].item<float>();
        for (int64_t token = 0; token < vocab; ++token)
          if (token != kPadId && token != kBosId) all.emplace_back(beam_score + (z[token] - lse), beam * vocab + token);
      }
      std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      for (int64_t c = 0; c < count; ++c) {
        EXPECT_EQ(best[j][c].item<float>(), all[static_cast<size_t>(c)].first) << "count " << count << " sentence " << j;
        EXPECT_EQ(indices[j][c].item<int64_t>(), all[static_cast<size_t>(c)].second) << "count " << count << " sentence " << j;
      }
    }
  }
}

// Several threads share the sentences; each gets its own; the result is the same.
TEST(BestContinuations, SameOnOneThreadAndOnTwo) {
  at::manual_seed(4);
  const auto logits = at::randn({64 * 4, 3000});
  const auto scores = -at::rand({64 * 4});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto [one, one_indices] = best_continuations(logits, scores, 4, 8, {});
  at::set_num_threads(2);
  const auto [two, two_indices] = best_continuations(logits, scores, 4, 8, {});
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, two));
  EXPECT_TRUE(at::equal(one_indices, two_indices));
}

TEST(BestContinuations, RejectsNaNLogitsAndMisshapenInputs) {
  auto logits = at::randn({4, 10});
  logits[2][7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(best_continuations(logits, at::zeros({4}), 2, 2, {}), Error);
  EXPECT_THROW(best_continuations(at::randn({4, 10}), at::zeros({3}), 2, 2, {}), Error);
  EXPECT_THROW(best_continuations(at::randn({5, 10}), at::zeros({5}), 2, 2, {}), Error);
  ContinuationRules rules;
  rules.only_eos = {true};  // one entry for two sentences
  EXPECT_THROW(best_continuations(at::randn({4, 10}), at::zeros({4}), 2, 2, rules), Error);
}

}  // namespace
}  // namespace mixseq
