#include "mixseq/quant/layer_search.h"

#include <gtest/gtest.h>

#include <map>

namespace mixseq {
namespace {

// Four layers whose quantization costs add up: the score of a plan is 30 minus the drops of the
// layers it quantizes.
const std::map<std::string, double> kDrop = {{"a", 0.05}, {"b", 0.5}, {"c", 0.1}, {"d", 0.0}};

QuantizationPlan full_plan() {
  QuantizationPlan plan;
  for (const char* name : {"a", "b", "c", "d"}) {
    LayerQuantizationPlan layer;
    layer.name = name;
    plan.layers.push_back(layer);
  }
  return plan;
}

double additive_score(const QuantizationPlan& plan) {
  double score = 30;
  for (const auto& layer : plan.layers) score -= kDrop.at(layer.name);
  return score;
}

std::vector<std::string> names(const QuantizationPlan& plan) {
  std::vector<std::string> out;
  for (const auto& layer : plan.layers) out.push_back(layer.name);
  return out;
}

TEST(LayerSearch, KeepsTheMostSensitiveLayersInFloatUntilWithinBudget) {
  const auto result = search_float_layers(full_plan(), 30, additive_score, {/*budget=*/0.2});
  // All quantized: 29.35 < 29.8. b alone costs most; without it: 29.85, within budget.
  EXPECT_EQ(result.float_layers, std::vector<std::string>{"b"});
  EXPECT_EQ(names(result.plan), (std::vector<std::string>{"a", "c", "d"}));
  EXPECT_DOUBLE_EQ(result.score, 29.85);
  ASSERT_EQ(result.trials.size(), 6u);  // all, 4 alone, +b
  EXPECT_EQ(result.trials[0].tried, "all layers");
  EXPECT_DOUBLE_EQ(result.trials[0].score, 29.35);
  EXPECT_EQ(result.trials[2].tried, "b alone");
  EXPECT_EQ(result.trials[5].tried, "float: +b");

  // No loss allowed: b, c and a go to float (most sensitive first); d costs nothing.
  const auto strict = search_float_layers(full_plan(), 30, additive_score, {/*budget=*/0.0});
  EXPECT_EQ(strict.float_layers, (std::vector<std::string>{"b", "c", "a"}));
  EXPECT_EQ(names(strict.plan), std::vector<std::string>{"d"});
}

TEST(LayerSearch, StopsAtOnceWithinBudgetAndFallsBackToFloat) {
  const auto easy = search_float_layers(full_plan(), 30, additive_score, {/*budget=*/1.0});
  EXPECT_TRUE(easy.float_layers.empty());
  EXPECT_EQ(easy.trials.size(), 1u);
  EXPECT_EQ(names(easy.plan).size(), 4u);

  const auto hopeless = search_float_layers(full_plan(), 30, [](const QuantizationPlan&) { return 0.0; });
  EXPECT_TRUE(hopeless.plan.layers.empty());
  EXPECT_EQ(hopeless.float_layers.size(), 4u);
  EXPECT_DOUBLE_EQ(hopeless.score, 30);
}

}  // namespace
}  // namespace mixseq
