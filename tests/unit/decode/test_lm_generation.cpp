#include "mixseq/decode/lm_generation.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mixseq {
namespace {

torch::Tensor log_of(std::vector<double> probabilities) {
  return torch::tensor(probabilities, torch::kDouble).log().to(torch::kFloat);
}

TEST(SamplingDistribution, TemperatureOneIsTheModelsDistribution) {
  const auto distribution = sampling_distribution(log_of({0.5, 0.3, 0.2}), GenerationOptions{});
  EXPECT_TRUE(distribution.allclose(torch::tensor({0.5f, 0.3f, 0.2f}), 1e-6, 1e-6));
}

TEST(SamplingDistribution, TemperatureSharpensAndFlattens) {
  GenerationOptions options;
  options.temperature = 0.5;  // p^2, renormalized: 0.25 0.09 0.04 over 0.38
  EXPECT_TRUE(sampling_distribution(log_of({0.5, 0.3, 0.2}), options)
                  .allclose(torch::tensor({0.25f / 0.38f, 0.09f / 0.38f, 0.04f / 0.38f}), 1e-5, 1e-6));
  options.temperature = 1e6;  // nearly uniform
  EXPECT_TRUE(sampling_distribution(log_of({0.5, 0.3, 0.2}), options).allclose(torch::full({3}, 1.0f / 3), 1e-4, 1e-5));
}

TEST(SamplingDistribution, TopKKeepsTheKLikeliest) {
  GenerationOptions options;
  options.top_k = 2;
  EXPECT_TRUE(sampling_distribution(log_of({0.1, 0.5, 0.15, 0.25}), options)
                  .allclose(torch::tensor({0.0f, 0.5f / 0.75f, 0.0f, 0.25f / 0.75f}), 1e-5, 1e-6));
}

TEST(SamplingDistribution, TopPKeepsTheSmallestSetReachingP) {
  GenerationOptions options;
  options.top_p = 0.7;  // 0.5 alone is below 0.7; 0.5 + 0.25 reaches it; 0.15 and 0.1 go
  EXPECT_TRUE(sampling_distribution(log_of({0.1, 0.5, 0.15, 0.25}), options)
                  .allclose(torch::tensor({0.0f, 0.5f / 0.75f, 0.0f, 0.25f / 0.75f}), 1e-5, 1e-6));
  options.top_p = 0.4;  // the likeliest token alone
  EXPECT_TRUE(sampling_distribution(log_of({0.1, 0.5, 0.15, 0.25}), options)
                  .allclose(torch::tensor({0.0f, 1.0f, 0.0f, 0.0f}), 1e-6, 1e-6));
}

}  // namespace
}  // namespace mixseq
