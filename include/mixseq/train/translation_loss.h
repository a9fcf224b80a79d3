// The loss of one translation batch: the model's forward pass under autocast (teacher forcing)
// and the label-smoothed cross-entropy of its targets, summed (criteria/
// label_smoothed_cross_entropy.h). It is what the translation trainer gives UpdateStep for each
// micro-batch and sums over the validation split, and what `mixseq bench train` times.
#pragma once

#include <torch/types.h>

#include "mixseq/criteria/label_smoothed_cross_entropy.h"
#include "mixseq/data/translation_batch.h"
#include "mixseq/models/seq2seq_model.h"
#include "mixseq/train/update_step.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

// `batch` may live on the CPU: it is moved to `device` first. Gradients are recorded unless the
// caller holds a torch::NoGradGuard (validation).
LossSums translation_loss(Seq2SeqModelImpl& model, const TranslationBatch& batch,
                          const LabelSmoothingOptions& criterion, Precision precision, const torch::Device& device);

}  // namespace mixseq
