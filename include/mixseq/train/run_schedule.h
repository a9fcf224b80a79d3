// RunSchedule: how many updates a run makes and the learning rate of each, for every task's loop.
// The length is what train.max_epochs and train.max_steps allow; with train.max_time it is sized
// once to the updates that fit in what is left of the budget at the speed measured so far
// (validations included), and the learning-rate schedule with it, so that the schedules that
// depend on the total (gnmt_step's decay, cosine) end about on time. It is sized at the first
// epoch end or once 5% of the budget has passed, whichever comes first, and not before 20 updates
// of the invocation: late enough that start-up and the first updates do not dominate the speed,
// early enough that a cosine or gnmt_step decay has barely begun, so the learning rate does not
// jump. Then it is only ever shortened: at each further tenth of the budget, a run that has become
// slower than measured (another process took a core) shrinks to the updates that still fit, so
// that its decay still ends on time instead of being cut off at a high learning rate (a shorter
// total only lowers the learning rate of cosine, polynomial and gnmt_step). It never grows:
// re-sizing both ways at every epoch end (before issue 29) raised the learning rate mid-run. The
// run stops on time, its last validation included, whatever the estimate. Every decision is
// taken on the time the ranks agreed on (TrainingSession::agreed_train_seconds), so all ranks
// take it at the same update.
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
  void shorten_to_time_budget();
  void use_total(int64_t total_steps);

  const TrainingSession& session_;
  LrScheduleOptions options_;
  double lr_;
  int64_t most_steps_;   // what max_epochs and max_steps allow
  int64_t total_steps_;
  LrSchedule schedule_;
  bool sized_ = false;  // the time budget has sized the schedule
  double next_check_ = 0;  // after sizing: the share of train.max_time at which to check the speed again
};

}  // namespace mixseq
