// QuantizationPlan: everything needed to quantize a float model the same way again: the mode,
// and for each quantized layer its resolved settings and calibrated activation ranges (layers
// kept in float are absent). `mixseq quantize` makes it and stores it, as JSON, in the
// checkpoint (CheckpointContents::quantization) next to the weights; loading applies it, on the
// weight grids stored with 8-bit weights (quant/int8_weight_storage.h), else recomputing them
// from the fp32 weights (deterministic).
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <string>
#include <vector>

#include "mixseq/quant/calibration.h"
#include "mixseq/quant/quantization_config.h"

namespace mixseq {

struct LayerQuantizationPlan {
  std::string name;                    // module path, e.g. "attention.query_proj"
  LayerQuantizationSettings settings;  // as resolved for this layer (keep_float is false)
  double input_min = 0, input_max = 0;    // clipped calibration range of the input (a point's activation)
  double output_min = 0, output_max = 0;  // and of the output (a point's or an embedding's: as the input)
};

struct QuantizationPlan {
  std::string mode = "int8";  // int8 or simulated
  std::vector<LayerQuantizationPlan> layers;

  std::string to_json() const;
  // `source` names the text in errors.
  static QuantizationPlan from_json(const std::string& json, const std::string& source);
};

// One entry per calibrated layer, its range clipped as its settings say. Throws mixseq::Error for
// a layer calibration never reached or settings the mode cannot run (16 bits in int8).
QuantizationPlan make_quantization_plan(const QuantizationConfig& config, const Calibration& calibration);

// Switches every layer the plan names to its quantized form and every other quantizable layer,
// embedding and point to float (so plans can be tried one after another on one model). Throws
// mixseq::Error for a name `model` lacks, an embedding or point in an int8 plan, or int8 where
// no int8 engine exists. A layer in `weight_scales` (by layer name: the scales a checkpoint
// stored with its int8 weights, quant/int8_weight_storage.h) gets its symmetric weight grid from
// them instead of from its weight's range.
void apply_quantization_plan(torch::nn::Module& model, const QuantizationPlan& plan,
                             const std::map<std::string, torch::Tensor>& weight_scales = {});

}  // namespace mixseq
