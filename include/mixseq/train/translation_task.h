// The translation task: trains a sequence-to-sequence model (models/registry.h, family
// "seq2seq") on the sentence pairs of a `mixseq prepare` folder (data.dir).
//
// Batches: token-budget batches of pairs (data.max_tokens per rank, data/token_batching.h), in an
// order that is a pure function of train.seed and the epoch; train.update_freq batches make one
// update, whose loss is normalised by the target tokens of all of them on all ranks. The loss is
// the label-smoothed cross-entropy (criterion.*) of the teacher-forced decoder (translation_loss.h).
// Validation: the loss and perplexity of the validation split (data.valid_max_tokens per batch)
// and, at epoch ends with train.validate_bleu, beam-search BLEU (validation_search.*) of the
// detokenized translations against the raw references; BLEU is the task's metric, so by default
// checkpoint_best.pt has the highest validation BLEU. tok/s counts source + target tokens, as
// NVIDIA's GNMT does.
#pragma once

#include <memory>

#include "mixseq/train/train_config.h"
#include "mixseq/train/training_session.h"
#include "mixseq/train/training_task.h"

namespace mixseq {

// Opens and checks the data, then builds the model (seeded with train.seed) on the session's
// device. Throws mixseq::Error naming the setting or file at fault.
std::unique_ptr<TrainingTask> make_translation_task(const TrainConfig& config, const TrainingSession& session);

}  // namespace mixseq
