// The training loop for translation models, shared by every sequence-to-sequence architecture
// the registry builds. What is not particular to translation (device, data-parallel group, run
// folder, checkpoints and resume, signals, time budget, log lines) is the TrainingSession's
// (train/training_session.h); this loop owns the batches, validation and the best model.
//
// One update: set the learning rate for the step, run update_freq batches forward (under
// autocast for bf16/fp16) and backward, with the loss normalised by the target tokens of the
// whole update; unscale the gradients (fp16), skip the step if they overflowed, clip them on
// the fp32 values, step the optimizer. Every log_interval updates it logs epoch, step, lr,
// ms per update, tok/s (source + target tokens, as NVIDIA's GNMT counts), loss and perplexity
// per target token and the loss scale, to the console and as JSON lines to
// <run_dir>/metrics.jsonl. It validates (loss, and beam-search BLEU on the raw references) at
// epoch ends and at the end of training, saves <run_dir>/checkpoint_last.pt and, when
// train.best_metric improves (by default the BLEU; without BLEU, the validation loss),
// checkpoint_best.pt; without a validation split, checkpoint_best.pt is the final model. With train.keep_last_checkpoints N > 0 each save also writes
// checkpoint_<update>.pt and deletes all but the newest N of those, for averaging
// (train/checkpoint_average.h).
//
// Budgets: train.max_time stops after the update that uses up the wall-clock budget (time of
// earlier invocations of the run included), leaving room for a last validation, and sizes the
// learning-rate schedule to the updates that fit, re-estimated after 20 updates and at each
// epoch end. train.target_bleu stops at the first validation that reaches it; train.patience
// after that many validations of the best metric without improvement (fairseq's --patience).
//
// Resume: checkpoint_last.pt holds the model, the optimizer, the loss scaler, the random
// generator and the position in the epoch; since batch order is a pure function of the seed
// and the epoch, a killed run resumed from it computes the same updates as one that never
// stopped.
#pragma once

#include <cstdint>
#include <string>

#include "mixseq/train/run_directory.h"
#include "mixseq/train/train_config.h"

namespace mixseq {

struct TrainSummary {
  int64_t steps = 0;         // updates done in total (across resumes)
  int64_t epochs = 0;        // epochs completed
  double best_bleu = -1;     // best validation BLEU; -1 when never measured
  bool reached_target_bleu = false;  // train.target_bleu was set and validation reached it
  bool out_of_patience = false;      // train.patience validations passed without a better best metric
  double last_valid_loss = 0;  // per target token, at the last validation
  double seconds = 0;        // wall time of this invocation
  int stop_signal = 0;       // SIGINT or SIGTERM when a signal asked the run to stop; 0 when none did
};

// Trains from scratch or continues <run_dir>/checkpoint_last.pt, as `start` and the folder's
// contents say (train/run_directory.h: a previous run is never overwritten without
// RunStart::kOverwrite). SIGINT or SIGTERM end the run after the current update, with
// checkpoint_last.pt saved, and set stop_signal (in a data-parallel job, on every rank): the
// caller should then exit with 128 + stop_signal rather than go on as if training had finished.
TrainSummary train_translation_model(const TrainConfig& config, RunStart start);

}  // namespace mixseq
