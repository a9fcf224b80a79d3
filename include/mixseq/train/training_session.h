// TrainingSession: what every training task shares, whatever its model and data: the device and
// precision, the data-parallel group, the run folder (lock, plan, config.yaml, metrics.jsonl),
// checkpoints (save, resume, the random generators and loss scale inside them), SIGINT and
// SIGTERM, the wall-clock budget (train.max_time), and the train log lines with the progress line
// and ETA between them. The one training loop (train/run_training.h) calls the session at fixed points, and the task
// (train/training_task.h) owns its data, model and validation:
//
//   TrainingSession session(config.train, config.distributed, start);  // device, group, folder claimed
//   ... the task opens and checks its data and builds the model; the optimizer and UpdateStep ...
//   session.begin(config_yaml, config.data.dir, task.describe_data(), model, *optimizer, update_step);  // resumes
//   session.open_run_directory(config_yaml);           // everything checked: now the folder changes
//   run_training(session, schedule, task, ...);          // train/run_training.h: the one loop
//
// and run_training, at each update:
//
//     const auto agreed = session.agree_on_update(target_tokens);  // stop? out of time? tokens
//     if (agreed.stop_signal != 0 || agreed.out_of_time) break;
//     const auto update = update_step.run(...);
//     ++session.progress().step;
//     session.record_update(update, lr, total_steps);  // log line or progress line
//
// In a data-parallel job every rank has a session, and the ranks must call the methods marked
// "all ranks" in the same order (they exchange numbers); rank 0 alone writes files. Not
// thread-safe: one session per process.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mixseq/distributed/gradient_reducer.h"
#include "mixseq/distributed/process_group.h"
#include "mixseq/models/checkpoint.h"
#include "mixseq/train/run_directory.h"
#include "mixseq/train/train_config.h"
#include "mixseq/train/training_task.h"
#include "mixseq/train/update_step.h"
#include "mixseq/util/file_lock.h"
#include "mixseq/util/metrics_log.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

class PreparedData;

// The data-parallel side of a run; with one process there is no group and the sums are the
// rank's own.
struct DataParallel {
  std::unique_ptr<ProcessGroup> group;
  std::unique_ptr<GradientReducer> reducer;

  int64_t rank() const { return group ? group->rank() : 0; }
  int64_t world_size() const { return group ? group->world_size() : 1; }
  bool leader() const { return rank() == 0; }
  std::vector<double> sum(const std::vector<double>& values) const { return group ? group->sum(values) : values; }
};

// With only train.max_time set, the time budget alone ends training: the total is "unbounded"
// until TrainingSession::fit_to_time_budget sizes it.
constexpr int64_t kUnboundedSteps = int64_t{1} << 40;

// The updates that train.max_epochs and train.max_steps allow (the smaller of the two that are set).
int64_t planned_total_steps(const TrainOptions& options, int64_t updates_per_epoch);

// What the ranks agreed on before an update.
struct UpdateAgreement {
  int64_t update_tokens = 0;  // the update's target tokens over all ranks
  int stop_signal = 0;        // SIGINT or SIGTERM when any rank was asked to stop: all stop; 0 = go on
  bool out_of_time = false;   // train.max_time is used up but for the last validation's duration
};

// What a checkpoint holds of a `mixseq prepare` folder (data/prepared_data.h): vocab.txt byte for
// byte, its fingerprint, the tokenizer's kind and model; for TrainingSession::begin.
CheckpointContents describe_prepared_data(const std::string& data_dir, const PreparedData& data);

class TrainingSession {
 public:
  // All ranks. Checks the options of train.* and distributed.* that are not a task's (throwing
  // mixseq::Error naming the field), resolves the device and precision, joins the other ranks when a launcher started
  // several, locks and plans the run folder (changing nothing in it yet), and watches SIGINT and
  // SIGTERM. Throws mixseq::Error when the folder is refused (run_directory.h).
  TrainingSession(const TrainOptions& options, const DistributedConfig& distributed, RunStart start);
  // A run that ends before open_run_directory (a bad setting or data folder refused at start)
  // leaves nothing: a run folder it created is removed again (the lock file was all it held).
  ~TrainingSession();
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  const TrainOptions& options() const { return options_; }
  const torch::Device& device() const { return device_; }
  Precision precision() const { return precision_; }
  const DataParallel& parallel() const { return parallel_; }

  // All ranks, once the model, its optimizer and UpdateStep exist. Fills what every checkpoint
  // holds besides the tensors (the config, and what `data_description` says of the data: its
  // vocabulary and tokenizer; `data_dir` names the data in messages), continues
  // checkpoint_last.pt when the folder's plan says so (model, optimizer, progress, random
  // generators, loss scale; refusing a data folder with another vocabulary), and connects the
  // gradient reducer in a data-parallel job. The references must outlive the session.
  void begin(const std::string& config_yaml, const std::string& data_dir, const CheckpointContents& data_description,
             torch::nn::Module& model, torch::optim::Optimizer& optimizer, UpdateStep& update_step);

  // Where training stands; saved with every checkpoint. A task's loop advances step and its
  // data position (epoch, epoch_batches) and keeps best_score / best_loss.
  TrainingProgress& progress() { return contents_.progress; }
  int64_t first_step() const { return first_step_; }  // progress.step when this invocation began

  // Rank 0 applies the folder's plan (--overwrite deletes the previous run only now, when every
  // check has passed) and writes config.yaml; every rank opens its metrics log.
  void open_run_directory(const std::string& config_yaml);
  MetricsLog& metrics() { return *metrics_; }

  // Wall time: of this invocation, and of the whole run across resumes (validation included).
  double seconds() const;
  double train_seconds() const;
  // The mean over ranks of train_seconds() at the last agree_on_update(): the same on every rank,
  // so that decisions taken on it (RunSchedule's) are taken by all ranks at the same update.
  double agreed_train_seconds() const { return agreed_train_seconds_; }
  // train_seconds() per update of the run so far (validations included); 0 before the first.
  double seconds_per_update() const;
  // The last validation's duration, reserved at the end of a time budget.
  void set_validation_seconds(double seconds) { validation_seconds_ = seconds; }
  bool out_of_time() const;

  // All ranks. train.max_time: the updates that fit in what is left of the budget at the speed
  // so far, never more than `most_steps` nor fewer than one more; total_steps when there is no
  // budget or nothing measured yet. (NVIDIA's GNMT benchmark mode sizes its
  // schedule so; the schedules that depend on the total, gnmt_step's decay and cosine, then end
  // on time.)
  int64_t fit_to_time_budget(int64_t total_steps, int64_t most_steps) const;

  // All ranks, before each update: one exchange of the update's target tokens, the stop signals
  // and the time budget, logging a stop.
  UpdateAgreement agree_on_update(int64_t target_tokens);

  // All ranks, after each update (progress().step already advanced): adds it to the interval
  // and, every train.log_interval updates and at the last, logs loss, perplexity, tok/s (source
  // + target tokens of all ranks), ms per update and the loss scale; in between, rank 0 redraws
  // the progress line with the ETA.
  void record_update(const UpdateResult& update, double lr, int64_t total_steps);
  // What record_update's figures count (the task's, train/training_task.h); tokens by default.
  void set_units(const TrainingUnits& units) { units_ = units; }

  // All ranks, after a validation that measured the best-model metric: counts validations
  // without improvement (progress().validations_without_improvement, kept across resumes) and
  // returns true when train.patience is used up, which the loop then obeys by stopping.
  bool note_validation(bool improved);
  // train.patience was used up before this invocation (a resumed run that had stopped early).
  bool patience_exhausted() const;

  // checkpoint_last.pt (and, with train.keep_last_checkpoints, a numbered copy, keeping the
  // newest N), with the run time, random generators and loss scale of now. All ranks; rank 0 writes.
  void save_last();
  // checkpoint_best.pt, the current state. All ranks; rank 0 writes.
  void save_best();

 private:
  // Losses and token counts summed over the updates since the last log line. Sums stay on the
  // device until logged, so a GPU run does not wait for every update's loss.
  struct IntervalSums {
    torch::Tensor loss, nll;
    int64_t target_tokens = 0, source_tokens = 0, updates = 0, skipped = 0;
    double grad_norm = 0;  // summed over the updates not skipped
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    // Of the above, what a resumed run took over from its checkpoint (the updates before the
    // stop, which this invocation did not time); the tokens on rank 0 only, as the sums are.
    int64_t resumed_updates = 0, resumed_source_tokens = 0, resumed_target_tokens = 0;
  };
  void reset_interval();
  // All ranks: the interval's {loss, nll, source tokens, target tokens, resumed source tokens,
  // resumed target tokens}, each summed over the ranks.
  std::vector<double> summed_interval() const;
  TrainingUnits units_;

  TrainOptions options_;
  DistributedConfig distributed_;
  RunStart start_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  torch::Device device_;
  DataParallel parallel_;
  Precision precision_;
  std::optional<FileLock> run_dir_lock_;  // rank 0: held as long as the session lives
  bool created_run_dir_ = false;  // rank 0: the folder did not exist before this session
  bool opened_run_dir_ = false;   // open_run_directory ran
  RunDirectoryPlan run_plan_;

  CheckpointContents contents_;
  torch::nn::Module* model_ = nullptr;
  torch::optim::Optimizer* optimizer_ = nullptr;
  UpdateStep* update_step_ = nullptr;
  int64_t first_step_ = 0;
  double seconds_before_ = 0;      // train_seconds of earlier invocations of this run
  double validation_seconds_ = 0;  // the last validation's duration
  double agreed_train_seconds_ = 0;  // see agreed_train_seconds()
  std::optional<MetricsLog> metrics_;
  IntervalSums interval_;
};

}  // namespace mixseq
