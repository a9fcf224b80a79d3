// The automatic per-layer search of issue 13: the fewest layers to keep in float so that the
// quantized model scores at most `budget` below the float one (default 0.2 BLEU).
//
//   1. score the plan with every layer quantized; within budget: done
//   2. sensitivity: score each layer quantized alone; its drop = float score - that score
//   3. keep layers in float, most sensitive first, one more at a time, until within budget
//
// Greedy by single-layer sensitivity (as Distiller's and CTranslate2's users do by hand):
// len(layers) + 1 to 2 len(layers) + 1 scorings, not the 2^len(layers) of an exhaustive search,
// and not guaranteed minimal when layers interact. The caller scores a plan (quant/ cannot
// translate: decode/ is beside it on the ladder), typically by validation BLEU.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "mixseq/quant/quantization_plan.h"

namespace mixseq {

struct LayerSearchOptions {
  double budget = 0.2;  // the most the score may fall below the float score; 0: no loss allowed
};

struct LayerSearchTrial {
  std::string tried;                      // "all layers", "<layer> alone" or "float: +<layer>"
  std::vector<std::string> float_layers;  // the plan's layers kept in float in this trial
  QuantizationPlan plan;                  // what was scored
  double score = 0;
};

struct LayerSearchResult {
  QuantizationPlan plan;                  // the chosen plan (its float layers left out)
  std::vector<std::string> float_layers;  // most sensitive first
  double score = 0;                       // the chosen plan's score
  std::vector<LayerSearchTrial> trials;   // every scoring, in order
};

// Scores a plan: higher is better (e.g. BLEU of the model with the plan applied).
using PlanScorer = std::function<double(const QuantizationPlan& plan)>;

// `full` quantizes every candidate layer; `float_score` is the float model's score. When no
// subset meets the budget the result keeps every layer in float (its score is float_score).
LayerSearchResult search_float_layers(const QuantizationPlan& full, double float_score, const PlanScorer& score,
                                      const LayerSearchOptions& options = {});

}  // namespace mixseq
