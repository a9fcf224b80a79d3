// PlannedEpochTask: what the tasks whose epochs are planned lists of batches share (translation,
// speech recognition, classification). At each epoch's start the task plans this rank's batches
// (data/token_batching.h's plan_epoch_batches) and hands them to plan(); an update then takes
// train.update_freq of them, in order, and the epoch ends when no whole update is left. The
// position within the epoch is progress.epoch_batches, in batches, so that a resumed run starts
// at the same batch. Derived tasks implement the rest of TrainingTask (train/training_task.h).
#pragma once

#include <cstdint>
#include <vector>

#include "mixseq/train/training_task.h"

namespace mixseq {

class PlannedEpochTask : public TrainingTask {
 public:
  // Throws mixseq::Error for update_freq below 1.
  explicit PlannedEpochTask(int64_t update_freq);

  int64_t micro_batches() const final { return update_freq_; }
  void finish_update(TrainingProgress& progress) final { progress.epoch_batches += update_freq_; }
  bool epoch_ends_after(const TrainingProgress& progress) const final { return epoch_complete(progress); }
  bool epoch_complete(const TrainingProgress& progress) const final { return !has_update(progress); }
  void end_epoch(const TrainingProgress&) override {}

 protected:
  // The epoch's batches of example indices, this rank's, in order (at start_epoch).
  void plan(std::vector<std::vector<int64_t>> batches) { plan_ = std::move(batches); }
  // Whether a whole update is left after progress.epoch_batches.
  bool has_update(const TrainingProgress& progress) const;
  // The position in the epoch of micro-batch `micro` of the update after progress.epoch_batches,
  // and its example indices (has_update must hold).
  int64_t batch_index(const TrainingProgress& progress, int64_t micro) const { return progress.epoch_batches + micro; }
  const std::vector<int64_t>& planned_batch(const TrainingProgress& progress, int64_t micro) const;
  // Updates in an epoch of `batches` batches (the first epoch's plan); throws mixseq::Error naming
  // train.update_freq when there is not one whole update.
  int64_t updates_in(size_t batches) const;
  int64_t update_freq() const { return update_freq_; }

 private:
  int64_t update_freq_;
  std::vector<std::vector<int64_t>> plan_;
};

}  // namespace mixseq
