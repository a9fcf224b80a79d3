// The training loop for language models (models/registry.h: the language-model family), as
// Transformer-XL trains (Dai et al. 2019; NVIDIA's train.py): the training text is one token
// stream (sentences joined by </s>) read as lm.batch_size parallel streams cut into segments of
// lm.tgt_len tokens (data/lm_stream.h); each update trains on the next segment of every
// stream, and the model's memory carries from one segment to the next (detached: gradients stop
// at the segment boundary). The memory starts empty at each epoch start. lm.batch_chunk splits
// the streams of an update into micro-batches, each with its own memory, whose gradients add up
// to the same update.
//
// What every task shares (device and precision, data parallelism, the run folder, checkpoints,
// resume, signals, the time budget, log lines) is the TrainingSession's (train/training_session.h).
// Validation scores the validation split with lm.eval_tgt_len segments and lm.eval_mem_len
// memory (decode/lm_evaluation.h) at epoch ends, every train.validate_interval updates and at
// the end; checkpoint_best.pt is the model with the lowest validation loss. The metrics log
// has loss and perplexity per target token; tok/s counts target tokens.
//
// Resume is exact: checkpoint_last.pt holds the stream position (epoch, segments read) and the
// memory of every stream, so a killed run continues with the updates it would have made.
#pragma once

#include "mixseq/train/run_directory.h"
#include "mixseq/train/train_config.h"
#include "mixseq/train/trainer.h"

namespace mixseq {

// As train_translation_model (train/trainer.h), for a config whose model.arch is a language model
// and whose data.dir holds a monolingual corpus (`mixseq prepare` without a target language).
TrainSummary train_language_model(const TrainConfig& config, RunStart start);

}  // namespace mixseq
