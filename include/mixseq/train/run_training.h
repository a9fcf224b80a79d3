// run_training: the one training loop, for every task (train/training_task.h). The session
// (train/training_session.h) holds what a run has whatever it trains: device, data-parallel
// group, run folder, checkpoints, signals, budgets and log lines. The schedule
// (train/run_schedule.h) says how many updates and the learning rate of each.
//
// One update: the task prepares its micro-batches; the ranks agree on the update's targets (and
// on stopping); the learning rate is set; UpdateStep runs the micro-batches forward and backward
// under the run's precision, clips and steps (train/update_step.h); the session logs it. Every
// train.validate_interval updates the task validates (loss only); at each epoch's end and at the
// end of training it validates with its metric. A validation that improves train.best_metric
// (auto: the task's metric, else the loss) saves checkpoint_best.pt; train.patience validations
// without improvement stop the run; train.target_bleu stops it at the first validation that
// reaches it (tasks whose metric is BLEU). checkpoint_last.pt is saved every train.save_interval
// updates and at every epoch's end, with the task's carried state, so that a killed run resumed
// from it computes the same updates as one that never stopped. Without a validation split the
// final model is also checkpoint_best.pt.
//
// SIGINT or SIGTERM end the run after the current update, with checkpoint_last.pt saved, and set
// stop_signal (in a data-parallel job, on every rank): the caller should then exit with
// 128 + stop_signal rather than go on as if training had finished.
#pragma once

#include <cstdint>
#include <string>

#include "mixseq/train/run_schedule.h"
#include "mixseq/train/training_session.h"
#include "mixseq/train/training_task.h"
#include "mixseq/train/update_step.h"

namespace mixseq {

struct TrainSummary {
  int64_t steps = 0;                 // updates done in total (across resumes)
  int64_t epochs = 0;                // epochs completed in total (across resumes)
  std::string metric = "loss";       // the task's validation metric (TaskMetric::name)
  double best_score = -1;            // best validation value of that metric; -1 when never measured
  bool reached_target = false;       // train.target_bleu was set and validation reached it
  bool out_of_patience = false;      // train.patience validations passed without a better best metric
  double best_loss = -1;             // lowest validation loss across resumes; -1 when never validated
  double last_valid_loss = 0;        // per target, at the last validation of this invocation
  int64_t validations = 0;           // validations this invocation ran (0: a finished run resumed)
  double seconds = 0;                // wall time of this invocation
  int stop_signal = 0;               // SIGINT or SIGTERM when a signal asked the run to stop; 0 when none did
};

// `session.begin` has been called with the task's model, the optimizer and `update_step`, the run
// folder opened, and the task's state restored from the progress.
TrainSummary run_training(TrainingSession& session, RunSchedule& schedule, TrainingTask& task,
                          torch::optim::Optimizer& optimizer, UpdateStep& update_step);

}  // namespace mixseq
