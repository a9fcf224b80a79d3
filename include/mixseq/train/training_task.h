// TrainingTask: what one kind of training contributes to the one training loop
// (train/run_training.h): its data, its model's loss, its validation and what it carries across
// updates. The loop owns everything else (the schedule, updates, budgets, stop signals, patience,
// the best model, checkpoints), so that every task stops, resumes, logs and picks its best model
// alike. docs/architecture.md, "Adding a task", walks through the translation task.
//
// Nothing here assumes tokens: a task's micro-batches may be sentence pairs (translation), text
// segments (language models), audio feature frames, labelled sentences or spectrogram frames.
// What the loop needs of them is their count, the number of targets the loss is summed over
// (the update's loss is per target of all micro-batches of all ranks), and the loss itself.
//
// The calls, in order (one rank; in a data-parallel job every rank makes the same ones):
//
//   task.start_epoch(progress)                       // at each pass over the epoch, resumed ones too
//   while (auto targets = task.next_update(progress)) {   // nullopt: no whole update left in the epoch
//     ... the ranks agree on the update's targets ...
//     update_step.run(task.micro_batches(), task.micro_batch_loss, all ranks' targets);
//     ++progress.step;  task.finish_update(progress);   // the task advances its data position
//   }
//   task.epoch_complete(progress) ? task.end_epoch(progress) ...
//   task.validate(with_metric)                        // at epoch ends, intervals, the end
//   task.save_state(progress) / restore_state(progress)  // around checkpoints
#pragma once

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>

#include <cstdint>
#include <optional>
#include <string>

#include "mixseq/models/checkpoint.h"
#include "mixseq/models/model_config.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/train/update_step.h"

namespace mixseq {

// The metric a task judges its models by at validation, besides the loss.
struct TaskMetric {
  std::string name = "loss";     // its key in the metrics log and in train.best_metric: "bleu", "loss", ...
  bool higher_is_better = false; // BLEU: true; a loss or an error rate: false
  bool costly = false;           // measured only at epoch ends and at the end of training (a search over
                                 // the validation split); false: every validation measures it
};

// What the training log's figures mean for a task's micro-batches (LossSums in train/update_step.h).
struct TrainingUnits {
  std::string throughput = "tok";  // the log's "<unit>/s": source + target tokens (translation, language
                                   // models); "frames": the feature frames read (speech), targets not added
  bool targets_in_throughput = true;  // add the targets to the throughput (false: they count utterances)
  bool perplexity = true;          // exp(negative log-likelihood per target) means something (false for CTC)
};

// One validation of the current model over the validation split (all ranks' share summed).
struct TaskValidation {
  double loss = 0;                // the training criterion per target
  double perplexity = 0;          // exp(negative log-likelihood per target); 0 where it means nothing
  std::optional<double> metric;   // the task's metric when measured; nullopt: not measured this time
  nlohmann::json fields = nlohmann::json::object();  // more fields for the metrics log's "valid" record (e.g. "bleu", "tokens")
  std::string text;               // the log line's measurements, e.g. "loss 2.31 | ppl 10.1 | bleu 27.40"
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;

  // The model being trained (the one the optimizer steps and the checkpoints hold).
  virtual torch::nn::Module& model() = 0;
  // The metric validation reports and, with train.best_metric auto, picks the best model by.
  virtual TaskMetric metric() const = 0;
  // Updates in one epoch, for the length of the learning-rate schedule (an estimate is fine).
  virtual int64_t updates_per_epoch() const = 0;
  // The task has a validation split to validate on.
  virtual bool can_validate() const = 0;
  // What every checkpoint holds so that the model can be used without the data folder: the
  // vocabulary and the tokenizer of a token task (describe_prepared_data in
  // train/training_session.h); the tensors and the progress are the session's.
  virtual CheckpointContents describe_data() const = 0;
  // The model's parameters as the optimizer's groups, each with its share of the learning rate
  // (a classifier's encoder may learn slower than its head); the default is one group of all.
  virtual std::vector<ParameterGroup> parameter_groups() { return {{model().parameters(), 1.0}}; }
  // Fills in what the task derived from its data or from another model into the model section, so
  // that the configuration stored with the run builds the very model trained (a classifier's class
  // count and pretrained encoder shape); most tasks derive nothing.
  virtual void complete_model_config(ModelConfig& model) const {}
  // What the log's throughput counts and whether it shows a perplexity.
  virtual TrainingUnits units() const { return {}; }
  // The model and data in a few words for the start of the log ("gnmt with 1234 parameters, ...").
  virtual std::string description() const = 0;

  // Positions the data at progress.epoch, progress.epoch_batches (a resumed run starts mid-epoch).
  virtual void start_epoch(const TrainingProgress& progress) = 0;
  // Prepares the next update's micro-batches and returns this rank's targets in them; nullopt when
  // the epoch has no whole update left.
  virtual std::optional<int64_t> next_update(const TrainingProgress& progress) = 0;
  // Micro-batches of the prepared update (at least 1).
  virtual int64_t micro_batches() const = 0;
  // The forward pass and summed loss of prepared micro-batch `micro` (train/update_step.h).
  virtual LossSums micro_batch_loss(int64_t micro) = 0;
  // After the update (progress.step already advanced): records the data consumed in
  // progress.epoch_batches, whatever unit the task counts its position in.
  virtual void finish_update(TrainingProgress& progress) = 0;
  // The update just made was the epoch's last: known in advance only where the task plans its
  // epochs (interval validation then waits for the epoch's end); false where it cannot tell.
  virtual bool epoch_ends_after(const TrainingProgress& progress) const = 0;
  // The epoch is used up (asked after next_update returned nullopt or the loop stopped).
  virtual bool epoch_complete(const TrainingProgress& progress) const = 0;
  // At a completed epoch's end, progress.epoch already advanced to the next one.
  virtual void end_epoch(const TrainingProgress& progress) = 0;

  // Over all ranks. `with_metric`: measure the task's metric too, where it is costly.
  virtual TaskValidation validate(bool with_metric) = 0;

  // What the task carries from one update to the next, into the checkpoint (all ranks) and back
  // from it on resume; and what the best checkpoint, a model for evaluation, keeps of it.
  virtual void save_state(TrainingProgress& progress) { progress.carried_state.clear(); }
  virtual void restore_state(const TrainingProgress& progress) {}
};

}  // namespace mixseq
