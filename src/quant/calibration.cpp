#include "mixseq/quant/calibration.h"

#include "mixseq/nn/quantizable_embedding.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantization_point.h"

namespace mixseq {
namespace {

// Visits every quantizable module of `model` in registration order: linear layers (every
// mode), embeddings and quantization points (simulation only).
template <typename Visit>
void for_each_quantizable(torch::nn::Module& model, Visit&& visit) {
  for (const auto& item : model.named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    auto* module = item.value().get();
    if (dynamic_cast<QuantizableLinearImpl*>(module) || dynamic_cast<QuantizableEmbeddingImpl*>(module) ||
        dynamic_cast<QuantizationPointImpl*>(module))
      visit(item.key(), *module);
  }
}

}  // namespace

std::vector<std::string> quantizable_layer_names(torch::nn::Module& model) {
  std::vector<std::string> names;
  for_each_quantizable(model, [&](const std::string& name, torch::nn::Module&) { names.push_back(name); });
  return names;
}

Calibration::Calibration(torch::nn::Module& model, const QuantizationConfig& config) : model_(model) {
  for_each_quantizable(model, [&](const std::string& name, torch::nn::Module& module) {
    auto* linear = dynamic_cast<QuantizableLinearImpl*>(&module);
    if (!linear && config.mode != "simulated") return;  // int8 runs embeddings and points in fp32
    const auto settings = config.settings_for(name);
    if (settings.keep_float) return;
    const double percentile = settings.clip == "percentile" ? settings.percentile : 0.0;  // 0: none recorded
    auto& stats = statistics_
                      .emplace(name, LayerStatistics{ActivationStatistics(percentile), ActivationStatistics(percentile)})
                      .first->second;
    if (linear) {
      linear->set_observer([&stats](const torch::Tensor& input, const torch::Tensor& output) {
        stats.input.add(input);
        stats.output.add(output);
      });
    } else if (auto* embedding = dynamic_cast<QuantizableEmbeddingImpl*>(&module)) {
      embedding->set_observer([&stats](const torch::Tensor& rows) { stats.input.add(rows); });
    } else {
      dynamic_cast<QuantizationPointImpl&>(module).set_observer([&stats](const torch::Tensor& x) { stats.input.add(x); });
    }
  });
}

Calibration::~Calibration() {
  for_each_quantizable(model_, [](const std::string&, torch::nn::Module& module) {
    if (auto* linear = dynamic_cast<QuantizableLinearImpl*>(&module)) linear->set_observer({});
    if (auto* embedding = dynamic_cast<QuantizableEmbeddingImpl*>(&module)) embedding->set_observer({});
    if (auto* point = dynamic_cast<QuantizationPointImpl*>(&module)) point->set_observer({});
  });
}

}  // namespace mixseq
