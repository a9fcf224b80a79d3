#include "mixseq/train/update_step.h"

#include <ATen/ATen.h>

#include "mixseq/util/threads.h"

namespace mixseq {

UpdateStep::UpdateStep(Seq2SeqModelImpl& model, torch::optim::Optimizer& optimizer,
                       const LabelSmoothingOptions& criterion, const GradientClippingOptions& clipping,
                       const LossScalerOptions& loss_scaler, Precision precision, const torch::Device& device)
    : model_(model),
      optimizer_(optimizer),
      criterion_(criterion),
      clipping_(clipping),
      scaler_(loss_scaler),
      precision_(precision),
      device_(device),
      parameters_(model.parameters()) {}

UpdateResult UpdateStep::run(const std::vector<TranslationBatch>& batches, int64_t update_tokens) {
  UpdateResult result;
  result.loss = torch::zeros({}, torch::device(device_));
  result.nll = torch::zeros({}, torch::device(device_));
  if (update_tokens == 0)
    for (const auto& batch : batches) update_tokens += batch.target_tokens;
  for (size_t micro = 0; micro < batches.size(); ++micro) {
    adapt_threads_to_load();
    const auto batch = batches[micro].to(device_);
    CrossEntropySums sums;
    {
      const AutocastScope autocast(precision_, device_);
      const auto logits = model_.forward(batch.source, batch.source_lengths, batch.target_input);  // [B, T, V]
      sums = label_smoothed_cross_entropy(logits, batch.target_output, criterion_);
    }
    const auto loss = sums.loss / static_cast<double>(update_tokens);  // per target token of the update
    if (reducer_ != nullptr && micro + 1 == batches.size()) reducer_->arm();
    (scaling() ? scaler_.scale(loss) : loss).backward();
    result.loss += sums.loss.detach();
    result.nll += sums.nll;
    result.source_tokens += batch.source_tokens;
    result.target_tokens += batch.target_tokens;
  }
  if (reducer_ != nullptr) reducer_->finish();  // every rank now holds the same summed gradients
  if (scaling()) {
    scaler_.unscale_(parameters_);
    result.skipped = DynamicLossScaler::found_inf(parameters_);
    scaler_.update(result.skipped);
  }
  if (!result.skipped) {
    clip_gradient_norm(parameters_, clipping_);
    optimizer_.step();
  }
  optimizer_.zero_grad();
  return result;
}

}  // namespace mixseq
