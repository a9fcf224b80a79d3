// RunSchedule: how many updates a run makes and the learning rate of each, for every task's loop.
// The length is what train.max_epochs and train.max_steps allow; with train.max_time it is
// re-sized to the updates that fit in the budget at the speed measured so far (after the first
// 20 updates of an invocation and at each epoch end), and the learning-rate schedule with it, so
// that the schedules that depend on the total (gnmt_step's decay, cosine) end on time.
#pragma once

#include <cstdint>

#include "mixseq/optim/lr_schedule.h"
#include "mixseq/train/training_session.h"

namespace mixseq {

class RunSchedule {
 public:
  // `session` must outlive the schedule.
  RunSchedule(const TrainingSession& session, const LrScheduleOptions& options, double lr, int64_t updates_per_epoch);

  int64_t total_steps() const { return total_steps_; }
  double lr_at(int64_t step) const { return schedule_.lr_at(step); }

  // All ranks, after each update: re-sizes to the time budget at the first speed measurement.
  void after_update(int64_t step);
  // All ranks, at each epoch end.
  void fit_to_time_budget();

 private:
  const TrainingSession& session_;
  LrScheduleOptions options_;
  double lr_;
  int64_t most_steps_;   // what max_epochs and max_steps allow
  int64_t total_steps_;
  LrSchedule schedule_;
};

}  // namespace mixseq
