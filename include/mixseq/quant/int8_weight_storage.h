// Int8 weight storage: which weights a quantized checkpoint keeps in 8 bits instead of fp32,
// about 4x smaller for those layers. quant/ decides which and computes the values;
// models/checkpoint.h stores them (checksummed) and dequantizes them on load.
//
// A weight is stored in 8 bits when its layer runs int8 in the plan and nothing else reads it
// in float: a layer's own weight, or the LSTM weight a gate product views
// (nn/quantizable_lstm.h). A Transformer output projection tied to the embedding keeps the fp32
// matrix, which the embedding lookups read; simulated plans keep fp32 weights.
//
// Loading gives back the exact grid: the stored scales are the plan's weight grids again
// (apply_quantization_plan's weight_scales), and the float parameters hold scale * value, what
// quantize-dequantize of the original weight gives, so the int8 values repack identically.
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <optional>
#include <string>

#include "mixseq/models/checkpoint.h"
#include "mixseq/quant/quantization_plan.h"

namespace mixseq {

// The parameter holding `layer`'s weight if a checkpoint may store it in 8 bits, else nullopt.
std::optional<std::string> int8_storable_parameter(torch::nn::Module& model, const std::string& layer);

// By parameter name: the int8 values and scales of every storable weight of an int8 `plan`,
// which `model` runs (apply_quantization_plan first); empty for a simulated plan.
std::map<std::string, Int8StoredWeight> int8_stored_weights(torch::nn::Module& model, const QuantizationPlan& plan);

// The stored scales by parameter name (load_model_weights) -> by layer name of `plan`, what
// apply_quantization_plan takes.
std::map<std::string, torch::Tensor> int8_weight_scales_by_layer(
    torch::nn::Module& model, const QuantizationPlan& plan,
    const std::map<std::string, torch::Tensor>& scales_by_parameter);

}  // namespace mixseq
