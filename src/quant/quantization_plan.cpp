#include "mixseq/quant/quantization_plan.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "mixseq/nn/quantizable_embedding.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantization_point.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

QuantizationGrid range_grid(double lo, double hi, const LayerQuantizationSettings& s) {
  return make_quantization_grid(at::scalar_tensor(lo), at::scalar_tensor(hi), s.bits, s.activation_symmetric);
}

QuantizationGrid weight_grid(const torch::Tensor& weight, const LayerQuantizationSettings& s) {  // weight [N, K]
  const auto w = weight.detach().to(at::kCPU, at::kFloat);
  if (s.weight_per_channel)
    return make_quantization_grid(std::get<0>(w.min(1)), std::get<0>(w.max(1)), s.bits, s.weight_symmetric);  // [N]
  return make_quantization_grid(w.min(), w.max(), s.bits, s.weight_symmetric);
}

// The grid of weights stored in 8 bits (quant/int8_weight_storage.h): symmetric, their scales.
QuantizationGrid stored_weight_grid(const torch::Tensor& scale, const LayerQuantizationSettings& s) {
  MIXSEQ_CHECK(s.bits == 8 && s.weight_symmetric && s.weight_per_channel == (scale.dim() == 1),
               "int8 weights are stored for a layer whose plan is not symmetric 8-bit with ",
               scale.dim() == 1 ? "per-channel" : "per-tensor", " weights");
  QuantizationGrid grid;
  grid.qmax = 127;
  grid.qmin = -127;
  grid.scale = scale.to(at::kCPU, at::kFloat);
  grid.zero_point = at::zeros(scale.sizes(), at::kLong);
  return grid;
}

}  // namespace

std::string QuantizationPlan::to_json() const {
  nlohmann::json out;
  out["mode"] = mode;
  out["layers"] = nlohmann::json::array();
  for (const auto& layer : layers) {
    const auto& s = layer.settings;
    out["layers"].push_back({{"name", layer.name},
                             {"bits", s.bits},
                             {"weight_symmetric", s.weight_symmetric},
                             {"weight_per_channel", s.weight_per_channel},
                             {"activation_symmetric", s.activation_symmetric},
                             {"clip", s.clip},
                             {"percentile", s.percentile},
                             {"input_range", {layer.input_min, layer.input_max}},
                             {"output_range", {layer.output_min, layer.output_max}}});
  }
  return out.dump(1);
}

QuantizationPlan QuantizationPlan::from_json(const std::string& json, const std::string& source) {
  try {
    const auto in = nlohmann::json::parse(json);
    QuantizationPlan plan;
    plan.mode = in.at("mode").get<std::string>();
    MIXSEQ_CHECK(plan.mode == "int8" || plan.mode == "simulated", source, ": unknown quantization mode '", plan.mode,
                 "'");
    for (const auto& entry : in.at("layers")) {
      LayerQuantizationPlan layer;
      layer.name = entry.at("name").get<std::string>();
      auto& s = layer.settings;
      s.bits = entry.at("bits").get<int64_t>();
      s.weight_symmetric = entry.at("weight_symmetric").get<bool>();
      s.weight_per_channel = entry.at("weight_per_channel").get<bool>();
      s.activation_symmetric = entry.at("activation_symmetric").get<bool>();
      s.clip = entry.at("clip").get<std::string>();
      s.percentile = entry.at("percentile").get<double>();
      layer.input_min = entry.at("input_range").at(0).get<double>();
      layer.input_max = entry.at("input_range").at(1).get<double>();
      layer.output_min = entry.at("output_range").at(0).get<double>();
      layer.output_max = entry.at("output_range").at(1).get<double>();
      plan.layers.push_back(std::move(layer));
    }
    return plan;
  } catch (const nlohmann::json::exception& e) {
    throw Error(str_cat(source, ": unreadable quantization plan: ", e.what()));
  }
}

QuantizationPlan make_quantization_plan(const QuantizationConfig& config, const Calibration& calibration) {
  QuantizationPlan plan;
  plan.mode = config.mode;
  for (const auto& [name, stats] : calibration.statistics()) {
    LayerQuantizationPlan layer;
    layer.name = name;
    layer.settings = config.settings_for(name);
    MIXSEQ_CHECK(config.mode == "simulated" || layer.settings.bits == 8, "layer ", name, ": bits ",
                 layer.settings.bits, " runs only in mode: simulated (the int8 kernels take 8 bits)");
    MIXSEQ_CHECK(stats.input.batches() > 0, "layer ", name, " never ran during calibration; keep it in float ",
                 "({pattern: \"", name, "\", keep_float: true}) or calibrate on data that reaches it");
    std::tie(layer.input_min, layer.input_max) = stats.input.range(layer.settings.clip);
    // A point or an embedding has one activation: its output range is its input range.
    std::tie(layer.output_min, layer.output_max) =
        stats.output.batches() > 0 ? stats.output.range(layer.settings.clip) : stats.input.range(layer.settings.clip);
    plan.layers.push_back(std::move(layer));
  }
  return plan;
}

namespace {

// Simulation of an embedding or a quantization point (nn/quantization_point.h); false: not one.
bool apply_to_simulated_module(torch::nn::Module* module, const QuantizationPlan& plan,
                               const LayerQuantizationPlan& layer) {
  auto* embedding = dynamic_cast<QuantizableEmbeddingImpl*>(module);
  auto* point = dynamic_cast<QuantizationPointImpl*>(module);
  if (!embedding && !point) return false;
  MIXSEQ_CHECK(plan.mode == "simulated", "the quantization plan names '", layer.name, "', an ",
               embedding ? "embedding" : "element-wise/matmul quantization point",
               ", which is quantized in mode: simulated only");
  if (embedding) embedding->set_weight_grid(weight_grid(embedding->weight, layer.settings));
  if (point) point->set_grid(range_grid(layer.input_min, layer.input_max, layer.settings));
  return true;
}

}  // namespace

void apply_quantization_plan(torch::nn::Module& model, const QuantizationPlan& plan,
                             const std::map<std::string, torch::Tensor>& weight_scales) {

  const auto modules = model.named_modules(/*name_prefix=*/"", /*include_self=*/false);
  for (const auto& item : modules) {
    if (auto* linear = dynamic_cast<QuantizableLinearImpl*>(item.value().get())) {
      linear->set_quantization({});  // a derived weight (weight normalisation) is read afresh: the grids below use it
    }
    if (auto* embedding = dynamic_cast<QuantizableEmbeddingImpl*>(item.value().get())) embedding->set_weight_grid({});
    if (auto* point = dynamic_cast<QuantizationPointImpl*>(item.value().get())) point->set_grid({});
  }
  for (const auto& layer : plan.layers) {
    const auto* found = modules.find(layer.name);
    if (found && apply_to_simulated_module(found->get(), plan, layer)) continue;
    auto* linear = found ? dynamic_cast<QuantizableLinearImpl*>(found->get()) : nullptr;
    MIXSEQ_CHECK(linear != nullptr, "the quantization plan names layer '", layer.name,
                 "', which is not a quantizable layer of this model");
    LinearQuantization q;
    q.precision = plan.mode == "int8" ? LinearPrecision::kInt8 : LinearPrecision::kSimulated;
    const auto stored = weight_scales.find(layer.name);
    q.weight = stored == weight_scales.end() ? weight_grid(linear->weight, layer.settings)
                                             : stored_weight_grid(stored->second, layer.settings);
    q.input = range_grid(layer.input_min, layer.input_max, layer.settings);
    q.output = range_grid(layer.output_min, layer.output_max, layer.settings);
    try {
      linear->set_quantization(q);
    } catch (const Error& e) {
      throw Error(str_cat("layer ", layer.name, ": ", e.what()));
    }
  }
}

}  // namespace mixseq
