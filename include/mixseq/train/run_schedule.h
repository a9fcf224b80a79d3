// RunSchedule: how many updates a run makes and the learning rate of each, for every task's loop.
// The length is what train.max_epochs and train.max_steps allow; with train.max_time it is sized
// once to the updates that fit in what is left of the budget at the speed measured so far
// (validations included), and the learning-rate schedule with it, so that the schedules that
// depend on the total (gnmt_step's decay, cosine) end about on time. It is sized at the first
// epoch end or once 5% of the budget has passed, whichever comes first, and not before 20 updates
// of the invocation: late enough that start-up and the first updates do not dominate the speed,
// early enough that a cosine or gnmt_step decay has barely begun, so the learning rate does not
// jump. Once only: re-sizing at every epoch end (before issue 29) moved the schedule under a
// running cosine and raised the learning rate mid-run. The run still stops on time, its last
// validation included, whatever the estimate.
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

  // All ranks, after each update and at each epoch end: size the run to the time budget when it is time to.
  void after_update(int64_t step);
  void at_epoch_end(int64_t step);

 private:
  void fit_to_time_budget();

  const TrainingSession& session_;
  LrScheduleOptions options_;
  double lr_;
  int64_t most_steps_;   // what max_epochs and max_steps allow
  int64_t total_steps_;
  LrSchedule schedule_;
  bool sized_ = false;  // the time budget has sized the schedule
};

}  // namespace mixseq
