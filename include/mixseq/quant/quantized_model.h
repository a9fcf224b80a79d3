// Opening a translation checkpoint whether or not `mixseq quantize` wrote it: a quantized one
// loads its weights into the usual float model (those stored in 8 bits dequantized), then its
// stored plan (quant/quantization_plan.h) switches the planned layers to simulated or int8
// execution, on the stored weight grids where there are some. This is what translate and
// bench translate use; tools that need float weights call models/trained_model.h, which
// rejects a quantized checkpoint with an error that says so.
#pragma once

#include <string>
#include <vector>

#include "mixseq/models/checkpoint.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/quant/quantization_plan.h"

namespace mixseq {

// Throws mixseq::Error (naming the file) as load_trained_model does, and for an int8 plan on a
// device other than the CPU or on a machine without an int8 engine.
TrainedModel load_translation_model(const std::string& checkpoint_path, const torch::Device& device);
// One checkpoint, float or quantized: as above. Several: their float ensemble
// (models/trained_model.h's load_trained_models), which refuses a quantized member.
TrainedModel load_translation_model(const std::vector<std::string>& checkpoint_paths, const torch::Device& device);

// Writes `model`'s weights with `plan` and the rest of `source`'s contents to `path`: the
// quantized checkpoint. `source` is the float checkpoint the model came from. `model` runs
// `plan` (apply_quantization_plan): the weights of its int8 layers are stored in 8 bits
// (quant/int8_weight_storage.h), the others in fp32.
void save_quantized_checkpoint(const std::string& path, const std::string& source, torch::nn::Module& model,
                               const QuantizationPlan& plan);

}  // namespace mixseq
