// The CTC loss against hand-computed path sums, its gradient against finite differences, and the
// zeroing and counting of utterances too short for their transcript.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "mixseq/criteria/ctc_loss.h"

namespace mixseq {
namespace {

TEST(CtcLoss, MinFramesCountsABlankBetweenRepeats) {
  EXPECT_EQ(ctc_min_frames({}), 0);
  EXPECT_EQ(ctc_min_frames({1, 2, 3}), 3);
  EXPECT_EQ(ctc_min_frames({1, 1, 2, 2, 2}), 8);
}

TEST(CtcLoss, EqualsTheSumOverAlignmentsByHand) {
  // V = 3 (blank, a, b), T = 3, target "a b": the alignments are every way to emit a then b with
  // blanks around and repeats merged: aab abb ab_ a_b _ab.
  const auto logits = torch::tensor({{0.2, 1.0, -0.5}, {0.3, 0.1, 0.7}, {-0.4, 0.5, 0.9}}).unsqueeze(0);  // [1, 3, 3]
  const auto p = torch::softmax(logits[0], -1);
  const auto at = [&](int t, int v) { return p[t][v].item<double>(); };
  const double sum = at(0, 1) * at(1, 1) * at(2, 2) + at(0, 1) * at(1, 2) * at(2, 2) + at(0, 1) * at(1, 2) * at(2, 0) +
                     at(0, 1) * at(1, 0) * at(2, 2) + at(0, 0) * at(1, 1) * at(2, 2);
  const auto sums = ctc_loss_sums(logits, torch::tensor({3}, torch::kLong), {{1, 2}});
  EXPECT_NEAR(sums.loss.item<double>(), -std::log(sum), 1e-5);
  EXPECT_EQ(sums.utterances, 1);
  EXPECT_EQ(sums.infeasible, 0);
}

TEST(CtcLoss, RespectsEachUtterancesLengthAndSumsTheBatch) {
  // The second utterance has 1 valid frame of 3: its loss is -log p(a) at frame 0.
  auto logits = torch::randn({2, 3, 3}, torch::kDouble);
  const auto sums = ctc_loss_sums(logits, torch::tensor({3, 1}, torch::kLong), {{1}, {1}});
  const auto p0 = torch::softmax(logits[0].to(torch::kFloat), -1);
  const auto p1 = torch::softmax(logits[1].to(torch::kFloat), -1);
  // target "a" over 3 frames: the a-runs with blanks around: a__ aa_ aaa _a_ _aa __a
  const auto q = [&](int t, int v) { return p0[t][v].item<double>(); };
  const double first = q(0, 1) * q(1, 0) * q(2, 0) + q(0, 1) * q(1, 1) * q(2, 0) + q(0, 1) * q(1, 1) * q(2, 1) +
                       q(0, 0) * q(1, 1) * q(2, 0) + q(0, 0) * q(1, 1) * q(2, 1) + q(0, 0) * q(1, 0) * q(2, 1);
  EXPECT_NEAR(sums.loss.item<double>(), -std::log(first) - std::log(p1[0][1].item<double>()), 1e-4);
}

TEST(CtcLoss, GradientMatchesFiniteDifferences) {
  torch::manual_seed(7);
  auto logits = torch::randn({2, 5, 4}, torch::kDouble).requires_grad_(true);
  const auto lengths = torch::tensor({5, 4}, torch::kLong);
  const std::vector<std::vector<int64_t>> targets = {{1, 2, 2}, {3, 1}};
  auto sums = ctc_loss_sums(logits, lengths, targets);
  sums.loss.backward();
  const auto analytic = logits.grad().clone();
  // ctc_loss_sums computes in fp32: finite differences of its fp32 result with a step large enough for it.
  const double h = 1e-2;
  torch::NoGradGuard no_grad;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 5; t += 2)
      for (int64_t v = 0; v < 4; ++v) {
        auto plus = logits.detach().clone(), minus = logits.detach().clone();
        plus[b][t][v] += h;
        minus[b][t][v] -= h;
        const double numeric = (ctc_loss_sums(plus, lengths, targets).loss.item<double>() -
                                ctc_loss_sums(minus, lengths, targets).loss.item<double>()) / (2 * h);
        EXPECT_NEAR(analytic[b][t][v].item<double>(), numeric, 2e-3) << b << "," << t << "," << v;
      }
  // Frames past the second utterance's length get no gradient.
  EXPECT_EQ(analytic[1][4].abs().sum().item<double>(), 0.0);
}

TEST(CtcLoss, TooShortUtterancesAreZeroedAndCounted) {
  auto logits = torch::randn({2, 2, 3}).requires_grad_(true);
  // "a a" needs 3 frames (a blank between the repeats); the first utterance has 2.
  const auto sums = ctc_loss_sums(logits, torch::tensor({2, 2}, torch::kLong), {{1, 1}, {2}});
  EXPECT_EQ(sums.infeasible, 1);
  EXPECT_TRUE(std::isfinite(sums.loss.item<double>()));
  const auto alone = ctc_loss_sums(logits.narrow(0, 1, 1), torch::tensor({2}, torch::kLong), {{2}});
  EXPECT_NEAR(sums.loss.item<double>(), alone.loss.item<double>(), 1e-6);
  sums.loss.backward();
  EXPECT_EQ(logits.grad()[0].abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(torch::isfinite(logits.grad()).all().item<bool>());
}

}  // namespace
}  // namespace mixseq
