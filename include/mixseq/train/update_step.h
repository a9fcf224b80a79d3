// UpdateStep: one optimizer update of a translation model over one or more batches (gradient
// accumulation), shared by the training loop and `mixseq bench train`:
//   forward each batch under autocast, label-smoothed loss normalised by the target tokens of
//   the whole update, backward (scaled for fp16); then unscale, skip the update if gradients
//   overflowed (fp16), clip the fp32 gradients, step the optimizer, zero the gradients.
// The caller sets the learning rate first. In a data-parallel job a GradientReducer sums the
// gradients of all ranks during the last batch's backward, so every rank takes the same step.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <vector>

#include "mixseq/criteria/label_smoothed_cross_entropy.h"
#include "mixseq/data/translation_batch.h"
#include "mixseq/distributed/gradient_reducer.h"
#include "mixseq/models/seq2seq_model.h"
#include "mixseq/optim/gradient_clipping.h"
#include "mixseq/optim/loss_scaler.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct UpdateResult {
  torch::Tensor loss;     // [] summed smoothed loss over the update's target tokens (on the device)
  torch::Tensor nll;      // [] summed negative log-likelihood
  int64_t source_tokens = 0;
  int64_t target_tokens = 0;
  bool skipped = false;   // fp16 gradients overflowed: no step was taken, the loss scale halved
};

class UpdateStep {
 public:
  UpdateStep(Seq2SeqModelImpl& model, torch::optim::Optimizer& optimizer, const LabelSmoothingOptions& criterion,
             const GradientClippingOptions& clipping, const LossScalerOptions& loss_scaler, Precision precision,
             const torch::Device& device);

  // `batches` may live on the CPU; each is moved to the device in turn. `update_tokens`: the
  // target tokens of the whole update, over all ranks (0: those of `batches`).
  UpdateResult run(const std::vector<TranslationBatch>& batches, int64_t update_tokens = 0);

  // Data-parallel training: `reducer` (or nullptr) sums the gradients over the ranks.
  void set_gradient_reducer(GradientReducer* reducer) { reducer_ = reducer; }

  bool scaling() const { return precision_ == Precision::kFp16; }
  DynamicLossScaler& loss_scaler() { return scaler_; }

 private:
  Seq2SeqModelImpl& model_;
  torch::optim::Optimizer& optimizer_;
  LabelSmoothingOptions criterion_;
  GradientClippingOptions clipping_;
  DynamicLossScaler scaler_;
  Precision precision_;
  torch::Device device_;
  std::vector<torch::Tensor> parameters_;
  GradientReducer* reducer_ = nullptr;
};

}  // namespace mixseq
