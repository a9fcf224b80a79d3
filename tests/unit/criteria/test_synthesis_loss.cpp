#include "mixseq/criteria/synthesis_loss.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

TEST(SynthesisLoss, IsTacotron2LossOfTheReference) {
  torch::manual_seed(1);
  const auto frames = torch::randn({2, 3, 4}), post = torch::randn({2, 3, 4}), target = torch::randn({2, 3, 4});
  const auto gate = torch::randn({2, 4});
  const auto gate_target = torch::tensor(std::vector<float>{0, 0, 1, 1, 0, 0, 0, 1}).view({2, 4});
  const auto loss = synthesis_loss(frames, post, gate, target, gate_target);
  // By hand: mean squared errors, and -[y log s(x) + (1 - y) log(1 - s(x))] averaged.
  const double mel = (frames - target).pow(2).mean().item<double>() + (post - target).pow(2).mean().item<double>();
  double bce = 0;
  for (int i = 0; i < 8; ++i) {
    const double x = gate.view(-1)[i].item<double>(), y = gate_target.view(-1)[i].item<double>();
    const double s = 1.0 / (1.0 + std::exp(-x));
    bce -= y * std::log(s) + (1 - y) * std::log(1 - s);
  }
  EXPECT_NEAR(loss.mel.item<double>(), mel, 1e-5);
  EXPECT_NEAR(loss.gate.item<double>(), bce / 8, 1e-5);
  EXPECT_NEAR(loss.total.item<double>(), mel + bce / 8, 1e-5);
  EXPECT_EQ(loss.guided_attention.item<double>(), 0.0);
}

TEST(SynthesisLoss, GuidedAttentionPenalisesOffDiagonalAttention) {
  const int64_t T = 6, S = 6;
  const auto lengths = torch::tensor(std::vector<int64_t>{6});
  const auto diagonal = torch::eye(S).unsqueeze(0);                             // [1, T, S]
  auto reversed = torch::flip(torch::eye(S), {1}).unsqueeze(0);                 // anti-diagonal
  const auto z = torch::zeros({1, 3, T}), g = torch::zeros({1, T});
  SynthesisLossOptions options;
  options.guided_attention_weight = 2.0;
  const auto on = synthesis_loss(z, z, g, z, g, options, diagonal, lengths, lengths);
  const auto off = synthesis_loss(z, z, g, z, g, options, reversed, lengths, lengths);
  EXPECT_NEAR(on.guided_attention.item<double>(), 0.0, 1e-7);  // W is 0 on the diagonal
  // Anti-diagonal: mean over the 36 cells of W[t, 5 - t] = 1 - exp(-((5 - 2t) / 6)^2 / 0.08).
  double expected = 0;
  for (int t = 0; t < 6; ++t) expected += 1 - std::exp(-std::pow((5.0 - 2 * t) / 6.0, 2) / 0.08);
  EXPECT_NEAR(off.guided_attention.item<double>(), expected / 36, 1e-6);
  EXPECT_NEAR((off.total - off.mel - off.gate).item<double>(), 2.0 * expected / 36, 1e-6);
  // Padding adds nothing: a text of 3 symbols ignores columns 3..5.
  const auto w = guided_attention_weights(torch::tensor(std::vector<int64_t>{3}), lengths, T, S, 0.2);
  EXPECT_EQ(w.slice(2, 3).abs().max().item<float>(), 0.0f);
  EXPECT_GT(w.slice(2, 0, 3).max().item<float>(), 0.5f);
}

TEST(AlignmentFigures, AreOneForADiagonalAndZeroForSpreadAttention) {
  // A diagonal alignment of 4 steps over 4 symbols, padded to [6, 5] with junk in the padding.
  auto a = torch::full({1, 6, 5}, 0.5f);
  a[0].narrow(0, 0, 4).narrow(1, 0, 4).copy_(torch::eye(4));
  a[0].narrow(0, 0, 4).narrow(1, 4, 1).zero_();
  const auto four = torch::tensor(std::vector<int64_t>{4});
  auto f = alignment_figures(a, four, four);
  EXPECT_EQ(f.utterances, 1);
  EXPECT_EQ(f.steps, 4);
  EXPECT_NEAR(f.diagonal, 1.0, 1e-9);
  EXPECT_NEAR(f.focus, 4.0, 1e-6);
  // Attention spread evenly over 10 symbols: it attends to the middle at every step, r = 0; focus 1/10.
  const auto ten = torch::tensor(std::vector<int64_t>{10});
  f = alignment_figures(torch::full({1, 10, 10}, 0.1f), ten, ten);
  EXPECT_NEAR(f.diagonal, 0.0, 1e-9);
  EXPECT_NEAR(f.focus / f.steps, 0.1, 1e-6);
  // Forward with a pause: steps attend to symbols 0 0 1 1 1 1 2 3 3 3. Positions p = that list,
  // t = 0..9: r = cov(t, p) / (sd t sd p), by hand (mean p 1.5: sum dt dp = 30.5, sum dt^2 = 82.5,
  // sum dp^2 = 12.5): 0.9604.
  const std::vector<int64_t> path = {0, 0, 1, 1, 1, 1, 2, 3, 3, 3};
  auto p = torch::zeros({1, 10, 4});
  for (int64_t t = 0; t < 10; ++t) p[0][t][path[static_cast<size_t>(t)]] = 1.0f;
  f = alignment_figures(p, torch::tensor(std::vector<int64_t>{4}), ten);
  EXPECT_NEAR(f.diagonal, 30.5 / std::sqrt(82.5 * 12.5), 1e-9);
  // Backwards: r = -1. Two utterances add up; a one-step utterance counts 0 but its focus counts.
  auto b = torch::zeros({2, 3, 3});
  b[0].copy_(torch::flip(torch::eye(3), {1}));
  b[1][0][2] = 1.0f;
  f = alignment_figures(b, torch::tensor(std::vector<int64_t>{3, 3}), torch::tensor(std::vector<int64_t>{3, 1}));
  EXPECT_EQ(f.utterances, 2);
  EXPECT_EQ(f.steps, 4);
  EXPECT_NEAR(f.diagonal, -1.0, 1e-9);
  EXPECT_NEAR(f.focus, 4.0, 1e-6);
  // Attention on symbols past the text's length is not counted.
  auto c = torch::zeros({1, 3, 5});
  c[0].narrow(1, 4, 1).fill_(1.0f);
  f = alignment_figures(c, torch::tensor(std::vector<int64_t>{2}), torch::tensor(std::vector<int64_t>{3}));
  EXPECT_NEAR(f.focus, 0.0, 1e-9);
  EXPECT_NEAR(f.diagonal, 0.0, 1e-9);
  EXPECT_THROW(alignment_figures(torch::zeros({2, 3}), four, four), Error);
}

}  // namespace
}  // namespace mixseq
