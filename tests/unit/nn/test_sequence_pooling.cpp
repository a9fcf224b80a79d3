// nn/sequence_pooling.h against values computed by hand, padding never read, and gradients.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "mixseq/nn/sequence_pooling.h"
#include "test_support.h"

namespace mixseq {
namespace {

TEST(SequencePooling, PoolsOnlyEachRowsOwnPositions) {
  // Row 0 has 2 states, row 1 has 3; the padding (1e6) must never show.
  const auto states = torch::tensor({1.0, -2.0, 3.0, 4.0, 1e6, 1e6, 0.5, 0.0, -1.0, 6.0, 2.5, -3.0}).view({2, 3, 2});
  const auto lengths = torch::tensor(std::vector<int64_t>{2, 3});
  const auto expect = [&](SequencePooling pooling, std::vector<double> values) {
    const auto pooled = pool_sequences(states, lengths, pooling);
    EXPECT_TRUE(torch::allclose(pooled, torch::tensor(values, torch::kFloat).view(pooled.sizes())))
        << pooled;
  };
  expect(SequencePooling::kLast, {3, 4, 2.5, -3});
  expect(SequencePooling::kMax, {3, 4, 2.5, 6});
  expect(SequencePooling::kMean, {2, 1, 2.0 / 3, 1});
  expect(SequencePooling::kConcat, {3, 4, 3, 4, 2, 1, 2.5, -3, 2.5, 6, 2.0 / 3, 1});
  EXPECT_EQ(pooled_size(SequencePooling::kConcat, 7), 21);
}

TEST(SequencePooling, GradientsReachOnlyTheStatesPooled) {
  auto states = torch::randn({2, 4, 3}, torch::kDouble).requires_grad_();
  const auto lengths = torch::tensor(std::vector<int64_t>{1, 4});
  pool_sequences(states, lengths, SequencePooling::kConcat).sum().backward();
  EXPECT_EQ(states.grad().slice(1, 1).select(0, 0).abs().sum().item<double>(), 0.0);  // row 0's padding
  // Finite differences of the mean + last pooling of one entry.
  const auto f = [&](const torch::Tensor& x) {
    return (pool_sequences(x, lengths, SequencePooling::kMean) + pool_sequences(x, lengths, SequencePooling::kLast))
        .sum()
        .item<double>();
  };
  const auto base = states.detach().clone();
  auto bumped = base.clone();
  bumped[1][3][2] += 1e-6;
  const double numeric = (f(bumped) - f(base)) / 1e-6;
  EXPECT_NEAR(numeric, 1.0 / 4 + 1.0, 1e-6);  // mean over 4 states, plus the last state
}

TEST(SequencePooling, BadLengthsAndNamesAreErrors) {
  const auto states = torch::zeros({2, 3, 2});
  EXPECT_NE(test::error_of([&] { pool_sequences(states, torch::tensor(std::vector<int64_t>{0, 3}), SequencePooling::kMean); })
                .find("lengths must be in [1, 3]"),
            std::string::npos);
  EXPECT_NE(test::error_of([] { sequence_pooling("sum", "model.lm_classifier.pooling"); })
                .find("model.lm_classifier.pooling must be last, mean, max or concat, not 'sum'"),
            std::string::npos);
}

}  // namespace
}  // namespace mixseq
