#include "mixseq/quant/int8_weight_storage.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/rnn.h>

#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/util/error.h"

namespace mixseq {

std::optional<std::string> int8_storable_parameter(torch::nn::Module& model, const std::string& layer) {
  const auto modules = model.named_modules(/*name_prefix=*/"", /*include_self=*/false);
  const auto* found = modules.find(layer);
  const auto* linear = found ? dynamic_cast<const QuantizableLinearImpl*>(found->get()) : nullptr;
  MIXSEQ_CHECK(linear != nullptr, "'", layer, "' is not a quantizable linear layer of this model");
  for (const auto& parameter : model.named_parameters()) {
    if (!parameter.value().is_same(linear->weight)) continue;
    if (parameter.key() == layer + ".weight") return parameter.key();  // its own
    const auto dot = parameter.key().rfind('.');
    const auto* owner = dot == std::string::npos ? &model : modules.find(parameter.key().substr(0, dot))->get();
    // A gate product's: its LSTM (the bidirectional one too) runs by its products while they are int8.
    if (dynamic_cast<const torch::nn::LSTMImpl*>(owner)) return parameter.key();
    return std::nullopt;  // shared with a float reader (a tied embedding)
  }
  return std::nullopt;
}

std::map<std::string, Int8StoredWeight> int8_stored_weights(torch::nn::Module& model, const QuantizationPlan& plan) {
  std::map<std::string, Int8StoredWeight> stored;
  if (plan.mode != "int8") return stored;
  const auto modules = model.named_modules(/*name_prefix=*/"", /*include_self=*/false);
  for (const auto& layer : plan.layers) {
    const auto parameter = int8_storable_parameter(model, layer.name);
    if (!parameter) continue;
    const auto& linear = dynamic_cast<const QuantizableLinearImpl&>(*modules[layer.name]);
    const auto& grid = linear.quantization().weight;
    MIXSEQ_CHECK(linear.quantization().precision == LinearPrecision::kInt8 && grid.symmetric() && grid.qmax <= 127,
                 "layer ", layer.name, " does not run int8 on a symmetric 8-bit weight grid; apply the plan first");
    const auto w = linear.weight.detach().to(at::kCPU, at::kFloat).contiguous();  // [N, K]
    // The same rounding as the int8 layer's own packing (nn/quantizable_linear.cpp).
    const auto values = grid.per_channel()
                            ? at::quantize_per_channel(w, grid.scale.to(at::kDouble), grid.zero_point, 0, at::kQInt8)
                            : at::quantize_per_tensor(w, grid.scale.item<double>(), 0, at::kQInt8);
    stored[*parameter] = {values.int_repr(), grid.scale.to(at::kFloat).contiguous()};
  }
  return stored;
}

std::map<std::string, torch::Tensor> int8_weight_scales_by_layer(
    torch::nn::Module& model, const QuantizationPlan& plan,
    const std::map<std::string, torch::Tensor>& scales_by_parameter) {
  std::map<std::string, torch::Tensor> by_layer;
  if (scales_by_parameter.empty()) return by_layer;
  for (const auto& layer : plan.layers) {
    const auto parameter = int8_storable_parameter(model, layer.name);
    const auto it = parameter ? scales_by_parameter.find(*parameter) : scales_by_parameter.end();
    if (it != scales_by_parameter.end()) by_layer[layer.name] = it->second;
  }
  MIXSEQ_CHECK(by_layer.size() == scales_by_parameter.size(), "int8 weights are stored for ",
               scales_by_parameter.size(), " parameters but the plan runs ", by_layer.size(),
               " of them in int8; the checkpoint's plan and weights disagree");
  return by_layer;
}

}  // namespace mixseq
