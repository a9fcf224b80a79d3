#include "mixseq/quant/quantized_model.h"

#include "mixseq/quant/int8_weight_storage.h"
#include "mixseq/util/error.h"

namespace mixseq {

TrainedModel load_translation_model(const std::string& checkpoint_path, const torch::Device& device) {
  auto trained = load_trained_model(checkpoint_path, device, /*accept_quantized=*/true);
  if (trained.quantization.empty()) return trained;
  const auto plan = QuantizationPlan::from_json(trained.quantization, checkpoint_path);
  MIXSEQ_CHECK(plan.mode != "int8" || device.is_cpu(), "'", checkpoint_path,
               "' is quantized to int8, which runs on the CPU only; use --device cpu");
  try {
    apply_quantization_plan(*trained.model, plan,
                            int8_weight_scales_by_layer(*trained.model, plan, trained.int8_weight_scales));
  } catch (const Error& e) {
    throw Error(str_cat("'", checkpoint_path, "': ", e.what()));
  }
  return trained;
}

TrainedModel load_translation_model(const std::vector<std::string>& checkpoint_paths, const torch::Device& device) {
  if (checkpoint_paths.size() == 1) return load_translation_model(checkpoint_paths.front(), device);
  return load_trained_models(checkpoint_paths, device);
}

void save_quantized_checkpoint(const std::string& path, const std::string& source, torch::nn::Module& model,
                               const QuantizationPlan& plan) {
  auto contents = read_checkpoint_contents(source);
  contents.quantization = plan.to_json();
  save_checkpoint(path, contents, model, /*optimizer=*/nullptr, int8_stored_weights(model, plan));
}

}  // namespace mixseq
