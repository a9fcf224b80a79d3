#include "mixseq/train/update_step.h"

#include <ATen/ATen.h>

#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"

namespace mixseq {

UpdateStep::UpdateStep(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                       const GradientClippingOptions& clipping, const LossScalerOptions& loss_scaler,
                       Precision precision, const torch::Device& device)
    : optimizer_(optimizer),
      clipping_(clipping),
      scaler_(loss_scaler),
      precision_(precision),
      device_(device),
      parameters_(model.parameters()) {}

UpdateResult UpdateStep::run(int64_t micro_batches, const ForwardLoss& forward_loss, int64_t update_tokens) {
  MIXSEQ_CHECK(micro_batches >= 1 && update_tokens >= 1, "an update needs at least one micro-batch (got ",
               micro_batches, ") and one target token (got ", update_tokens, ")");
  UpdateResult result;
  result.loss = torch::zeros({}, torch::device(device_));
  result.nll = torch::zeros({}, torch::device(device_));
  for (int64_t micro = 0; micro < micro_batches; ++micro) {
    adapt_threads_to_load();
    const LossSums sums = forward_loss(micro);
    const auto loss = sums.loss / static_cast<double>(update_tokens);  // per target token of the update
    if (reducer_ != nullptr && micro + 1 == micro_batches) reducer_->arm();
    (scaling() ? scaler_.scale(loss) : loss).backward();
    result.loss += sums.loss.detach();
    result.nll += sums.nll;
    result.source_tokens += sums.source_tokens;
    result.target_tokens += sums.target_tokens;
  }
  if (reducer_ != nullptr) reducer_->finish();  // every rank now holds the same summed gradients
  if (scaling()) {
    scaler_.unscale_(parameters_);
    result.skipped = DynamicLossScaler::found_inf(parameters_);
    scaler_.update(result.skipped);
  }
  if (!result.skipped) {
    result.grad_norm = clip_gradient_norm(parameters_, clipping_);
    optimizer_.step();
  }
  // Gradients back to none, as fairseq and PyTorch 2 leave them (LibTorch 1.13's zero_grad fills
  // them with zeros): the next backward's gradients are kept as computed rather than added into
  // zeros, a fill and an add per parameter, and a parameter no batch reached is not stepped.
  for (auto& parameter : parameters_) parameter.mutable_grad().reset();
  return result;
}

}  // namespace mixseq
