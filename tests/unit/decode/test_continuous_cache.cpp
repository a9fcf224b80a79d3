#include "mixseq/decode/continuous_cache.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// One stream of three positions with states 1, 2, 1 (D = 1), targets 5, 7, 5, model probabilities
// 0.5, 0.5, 0.25; theta 1, lambda 0.5, by hand:
//   t = 0: nothing kept: p = 0.5;
//   t = 1: keeps (h 1, next word 5); target 7 is not in the cache: p = 0.5 * 0.5 = 0.25;
//   t = 2: keeps (1, 5) and (2, 7); target 5: p_cache = e^(1*1) / (e^1 + e^(1*2)) = 1 / (1 + e),
//          p = 0.5 * 0.25 + 0.5 / (1 + e).
TEST(ContinuousCache, MixesAsComputedByHand) {
  ContinuousCache cache({10, 1.0, 0.5});
  const auto nll = -torch::tensor({{0.5, 0.5, 0.25}}, torch::kDouble).log().to(torch::kFloat);
  const auto states = torch::tensor({1.0f, 2.0f, 1.0f}).view({1, 3, 1});
  const auto targets = torch::tensor({5, 7, 5}, torch::kLong).view({1, 3});
  const auto mixed = cache.score(nll, states, targets);
  const double e = std::exp(1.0);
  const auto expected = -torch::tensor({{0.5, 0.25, 0.125 + 0.5 / (1 + e)}}, torch::kDouble).log();
  EXPECT_TRUE(mixed.to(torch::kDouble).allclose(expected, 1e-6, 1e-6)) << mixed << expected;
  EXPECT_EQ(mixed.scalar_type(), torch::kFloat);
  EXPECT_EQ(cache.kept(), 3);
}

// The formula of the header, position by position in double precision, with each stream's
// history kept as a list: the reference for the tensor version below.
struct NaiveCache {
  int64_t window;
  double theta, lambda;
  std::vector<std::vector<std::vector<double>>> states;  // [stream][position][D]
  std::vector<std::vector<int64_t>> ids;                 // [stream][position]

  std::vector<std::vector<double>> score(const torch::Tensor& nll, const torch::Tensor& h, const torch::Tensor& targets) {
    const int64_t B = targets.size(0), T = targets.size(1), D = h.size(2);
    states.resize(static_cast<size_t>(B));
    ids.resize(static_cast<size_t>(B));
    std::vector<std::vector<double>> result(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      auto& kept = states[static_cast<size_t>(b)];
      auto& next = ids[static_cast<size_t>(b)];
      for (int64_t t = 0; t < T; ++t) {
        std::vector<double> query(static_cast<size_t>(D));
        for (int64_t d = 0; d < D; ++d) query[static_cast<size_t>(d)] = h[b][t][d].item<double>();
        const int64_t target = targets[b][t].item<int64_t>();
        const double p_model = std::exp(-nll[b][t].item<double>());
        double total = 0, same = 0;
        const int64_t now = static_cast<int64_t>(kept.size());
        for (int64_t i = std::max<int64_t>(0, now - window); i < now; ++i) {
          if (next[static_cast<size_t>(i)] == kPadId) continue;
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += query[static_cast<size_t>(d)] * kept[static_cast<size_t>(i)][static_cast<size_t>(d)];
          const double w = std::exp(theta * dot);
          total += w;
          if (next[static_cast<size_t>(i)] == target) same += w;
        }
        double value = 0;
        if (target != kPadId) value = total > 0 ? -std::log((1 - lambda) * p_model + lambda * same / total) : -std::log(p_model);
        result[static_cast<size_t>(b)].push_back(value);
        kept.push_back(query);
        next.push_back(target);
      }
    }
    return result;
  }
};

TEST(ContinuousCache, EqualsThePositionByPositionFormulaAcrossSegmentsWithAWindow) {
  torch::manual_seed(3);
  const int64_t B = 2, T = 5, D = 3, window = 4;
  ContinuousCache cache({window, 0.7, 0.3});
  NaiveCache naive{window, 0.7, 0.3, {}, {}};
  for (int segment = 0; segment < 3; ++segment) {
    const auto nll = torch::rand({B, T}) * 3 + 0.1;
    const auto states = torch::randn({B, T, D});
    auto targets = torch::randint(1, 4, {B, T}, torch::kLong);  // few words: many matches
    if (segment == 1) targets[0][2] = kPadId;
    const auto mixed = cache.score(nll, states, targets);
    const auto expected = naive.score(nll, states, targets);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        EXPECT_NEAR(mixed[b][t].item<double>(), expected[static_cast<size_t>(b)][static_cast<size_t>(t)], 1e-5)
            << "segment " << segment << " stream " << b << " position " << t;
    EXPECT_EQ(cache.kept(), window);
  }
  EXPECT_EQ(cache.score(torch::ones({B, T}), torch::randn({B, T, D}), torch::full({B, T}, kPadId, torch::kLong))
                .abs()
                .sum()
                .item<double>(),
            0.0);  // padding targets score 0
}

TEST(ContinuousCache, OneLongSegmentEqualsTwoShortOnes) {
  torch::manual_seed(4);
  const auto nll = torch::rand({3, 8}) * 2 + 0.5;
  const auto states = torch::randn({3, 8, 4});
  const auto targets = torch::randint(1, 5, {3, 8}, torch::kLong);
  ContinuousCache whole({6, 0.5, 0.2}), halves({6, 0.5, 0.2});
  const auto at_once = whole.score(nll, states, targets);
  const auto first = halves.score(nll.narrow(1, 0, 4), states.narrow(1, 0, 4), targets.narrow(1, 0, 4));
  const auto second = halves.score(nll.narrow(1, 4, 4), states.narrow(1, 4, 4), targets.narrow(1, 4, 4));
  EXPECT_TRUE(at_once.allclose(torch::cat({first, second}, 1), 1e-6, 1e-6));
}

TEST(ContinuousCache, LambdaZeroOrNoWindowIsTheModelAlone) {
  torch::manual_seed(5);
  const auto nll = torch::rand({2, 6}) + 0.1;
  const auto states = torch::randn({2, 6, 3});
  const auto targets = torch::randint(1, 3, {2, 6}, torch::kLong);
  ContinuousCache off({0, 0.3, 0.5}), no_weight({100, 0.3, 0.0}), on({100, 0.3, 0.5});
  EXPECT_TRUE(off.score(nll, states, targets).equal(nll));
  EXPECT_TRUE(no_weight.score(nll, states, targets).allclose(nll, 1e-6, 1e-6));
  EXPECT_FALSE(on.score(nll, states, targets).allclose(nll, 1e-3, 1e-3));  // with few words, matches change it
}

TEST(ContinuousCache, BadOptionsAndShapesAreErrors) {
  EXPECT_THROW(ContinuousCache({-1, 0.3, 0.1}), Error);
  EXPECT_THROW(ContinuousCache({10, 0.0, 0.1}), Error);
  EXPECT_THROW(ContinuousCache({10, std::nan(""), 0.1}), Error);
  EXPECT_THROW(ContinuousCache({10, 0.3, 1.5}), Error);
  ContinuousCache cache({10, 0.3, 0.1});
  EXPECT_THROW(cache.score(torch::ones({2, 3}), torch::ones({2, 4, 5}), torch::ones({2, 3}, torch::kLong)), Error);
  cache.score(torch::ones({2, 3}), torch::ones({2, 3, 5}), torch::ones({2, 3}, torch::kLong));
  EXPECT_THROW(cache.score(torch::ones({3, 3}), torch::ones({3, 3, 5}), torch::ones({3, 3}, torch::kLong)), Error);
  cache.reset();
  EXPECT_EQ(cache.kept(), 0);
  EXPECT_NO_THROW(cache.score(torch::ones({3, 3}), torch::ones({3, 3, 5}), torch::ones({3, 3}, torch::kLong)));
}

}  // namespace
}  // namespace mixseq
