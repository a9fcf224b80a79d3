#include "mixseq/quant/calibration.h"

#include "mixseq/nn/quantizable_linear.h"

namespace mixseq {
namespace {

template <typename Visit>
void for_each_quantizable(torch::nn::Module& model, Visit&& visit) {
  for (const auto& item : model.named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    if (auto* linear = dynamic_cast<QuantizableLinearImpl*>(item.value().get())) visit(item.key(), *linear);
  }
}

}  // namespace

std::vector<std::string> quantizable_layer_names(torch::nn::Module& model) {
  std::vector<std::string> names;
  for_each_quantizable(model, [&](const std::string& name, QuantizableLinearImpl&) { names.push_back(name); });
  return names;
}

Calibration::Calibration(torch::nn::Module& model, const QuantizationConfig& config) : model_(model) {
  for_each_quantizable(model, [&](const std::string& name, QuantizableLinearImpl& linear) {
    const auto settings = config.settings_for(name);
    if (settings.keep_float) return;
    auto& stats = statistics_
                      .emplace(name, LayerStatistics{ActivationStatistics(settings.percentile),
                                                     ActivationStatistics(settings.percentile)})
                      .first->second;
    linear.set_observer([&stats](const torch::Tensor& input, const torch::Tensor& output) {
      stats.input.add(input);
      stats.output.add(output);
    });
  });
}

Calibration::~Calibration() {
  for_each_quantizable(model_, [](const std::string&, QuantizableLinearImpl& linear) { linear.set_observer({}); });
}

}  // namespace mixseq
