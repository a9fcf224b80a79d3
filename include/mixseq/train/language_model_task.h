// The language-model task: trains a language model (models/registry.h, family "language_model")
// as Transformer-XL trains (Dai et al. 2019; NVIDIA's train.py): the training text is one token
// stream (sentences joined by </s>) read as lm.batch_size parallel streams cut into segments of
// lm.tgt_len tokens (data/lm_stream.h); each update trains on the next segment of every stream,
// and the model's memory carries from one segment to the next (detached: gradients stop at the
// segment boundary). The memory starts empty at each epoch start. lm.batch_chunk splits the
// streams of an update into micro-batches, each with its own memory, whose gradients add up to
// the same update.
//
// Validation scores the validation split with lm.eval_tgt_len segments and lm.eval_mem_len memory
// (decode/lm_evaluation.h) every validation; its metric is the loss, so checkpoint_best.pt is the
// model with the lowest validation loss. tok/s counts target tokens. Resume is exact: the
// checkpoint holds the stream position (epoch, segments read) and the memory of every stream.
#pragma once

#include <memory>

#include "mixseq/train/train_config.h"
#include "mixseq/train/training_session.h"
#include "mixseq/train/training_task.h"

namespace mixseq {

// Opens and checks the monolingual corpus of data.dir, then builds the model (seeded with
// train.seed) on the session's device. Throws mixseq::Error naming the setting or file at fault.
std::unique_ptr<TrainingTask> make_language_model_task(const TrainConfig& config, const TrainingSession& session);

}  // namespace mixseq
