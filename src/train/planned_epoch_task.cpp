#include "mixseq/train/planned_epoch_task.h"

#include "mixseq/util/error.h"

namespace mixseq {

PlannedEpochTask::PlannedEpochTask(int64_t update_freq) : update_freq_(update_freq) {
  MIXSEQ_CHECK(update_freq >= 1, "train.update_freq must be at least 1, got ", update_freq);
}

bool PlannedEpochTask::has_update(const TrainingProgress& progress) const {
  return progress.epoch_batches + update_freq_ <= static_cast<int64_t>(plan_.size());
}

const std::vector<int64_t>& PlannedEpochTask::planned_batch(const TrainingProgress& progress, int64_t micro) const {
  const int64_t index = batch_index(progress, micro);
  MIXSEQ_CHECK(micro >= 0 && micro < update_freq_ && index < static_cast<int64_t>(plan_.size()),
               "planned_batch: micro-batch ", micro, " of the update at batch ", progress.epoch_batches,
               " is past the epoch's ", plan_.size(), " batches");
  return plan_[static_cast<size_t>(index)];
}

int64_t PlannedEpochTask::updates_in(size_t batches) const {
  const int64_t updates = static_cast<int64_t>(batches) / update_freq_;
  MIXSEQ_CHECK(updates > 0, "the training split makes ", batches, " batches, fewer than train.update_freq (",
               update_freq_, ")");
  return updates;
}

}  // namespace mixseq
