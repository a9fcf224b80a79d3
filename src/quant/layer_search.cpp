#include "mixseq/quant/layer_search.h"

#include <algorithm>
#include <set>

namespace mixseq {
namespace {

QuantizationPlan without(const QuantizationPlan& full, const std::set<std::string>& float_layers) {
  QuantizationPlan plan{full.mode, {}};
  for (const auto& layer : full.layers)
    if (!float_layers.count(layer.name)) plan.layers.push_back(layer);
  return plan;
}

}  // namespace

LayerSearchResult search_float_layers(const QuantizationPlan& full, double float_score, const PlanScorer& score,
                                      const LayerSearchOptions& options) {
  LayerSearchResult result;
  const double target = float_score - options.budget;
  const auto trial = [&](const std::string& tried, const std::vector<std::string>& float_layers,
                         QuantizationPlan plan) {
    const double value = score(plan);
    result.trials.push_back({tried, float_layers, std::move(plan), value});
    return value;
  };

  result.score = trial("all layers", {}, full);
  result.plan = full;
  if (result.score >= target) return result;

  std::vector<std::pair<double, std::string>> drops;  // (float_score - score alone, layer)
  for (const auto& layer : full.layers) {
    const double alone = trial(layer.name + " alone", {}, QuantizationPlan{full.mode, {layer}});
    drops.emplace_back(float_score - alone, layer.name);
  }
  // Most sensitive first; ties in plan order (stable).
  std::stable_sort(drops.begin(), drops.end(), [](const auto& a, const auto& b) { return a.first > b.first; });

  std::set<std::string> kept;
  for (const auto& [drop, name] : drops) {
    kept.insert(name);
    result.float_layers.push_back(name);
    result.plan = without(full, kept);
    if (result.plan.layers.empty()) break;  // all float: the float score, nothing to score
    result.score = trial("float: +" + name, result.float_layers, result.plan);
    if (result.score >= target) return result;
  }
  result.score = float_score;
  return result;
}

}  // namespace mixseq
