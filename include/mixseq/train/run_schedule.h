// RunSchedule: how many updates a run makes and the learning rate of each, for every task's loop.
// The length is what train.max_epochs and train.max_steps allow; with train.max_time it is sized
// to the updates that fit in what is left of the budget at the speed measured so far
// (validations included), and the learning-rate schedule with it, so that the schedules that
// depend on the total (gnmt_step's decay, cosine) end about when the budget does.
//
// It is first sized at the first epoch end or once 5% of the budget has passed, whichever comes
// first, and not before 20 updates of the invocation: late enough that start-up and the first
// updates do not dominate the speed, early enough that a decay has barely begun. From then on the
// speed is measured again at each tenth of the budget and half way from each check to the planned
// end (so that a run measured far too slow is caught before it ends), and a run whose end has moved
// by more than 2% is re-sized, both ways: a run that slowed down (another process took a core) so that its
// decay still ends on time instead of being cut off at a high learning rate; a run that sped up
// (its first measure counted start-up) so that it uses the whole budget instead of ending early
// (issue 26: Transformer-XL's WikiText-2 run ended at 1,575 s of 1,800).
//
// Re-sizing never moves the learning rate: after the first sizing, update `step` runs the
// schedule (built once for `nominal` updates) at position anchor_position + (step - anchor_step)
// * pace, and a re-sizing changes only the pace from the current position on, so that the
// position reaches the schedule's end at the new total. The rate goes on from where it is and
// keeps falling (re-building the schedule for another total at every epoch end, before issue 29,
// raised it mid-run). Schedules that do not depend on the total (inverse_sqrt, constant) keep
// their pace; only the run's end moves. The sizing is saved in checkpoints
// (TrainingProgress::schedule_pace), so a resumed run continues the same curve. The run stops on
// time, its last validation included, whatever the estimate. Every decision is taken on the time
// the ranks agreed on (TrainingSession::agreed_train_seconds), so all ranks take it at the same
// update.
#pragma once

#include <cstdint>

#include "mixseq/optim/lr_schedule.h"
#include "mixseq/train/training_session.h"

namespace mixseq {

class RunSchedule {
 public:
  // `session` must outlive the schedule; a resumed session's progress brings its sizing back.
  RunSchedule(TrainingSession& session, const LrScheduleOptions& options, double lr, int64_t updates_per_epoch);

  int64_t total_steps() const { return total_steps_; }
  double lr_at(int64_t step) const;

  // All ranks, after each update and at each epoch end: size the run to the time budget when it is time to.
  void after_update(int64_t step);
  void at_epoch_end(int64_t step);

 private:
  void size_to_time_budget();
  void resize_to_time_budget(int64_t step);
  void save_sizing();
  double position_at(int64_t step) const;  // after sizing: where update `step` is on the schedule
  void check_half_way_from(int64_t step);  // the next step check: half way from `step` to the planned end

  TrainingSession& session_;
  LrScheduleOptions options_;
  double lr_;
  int64_t most_steps_;   // what max_epochs and max_steps allow
  int64_t total_steps_;
  LrSchedule schedule_;
  bool paced_;           // the schedule's length depends on the total (gnmt_step, cosine)
  bool sized_ = false;   // the time budget has sized the schedule
  double next_check_ = 0;  // after sizing: the share of train.max_time at which to check the speed again
  int64_t next_check_step_ = 0;  // or this update, half way to the planned end, whichever comes first
  // After sizing (see above): the schedule's length and the step -> position line.
  int64_t nominal_steps_ = 0;
  int64_t anchor_step_ = 0;
  double anchor_position_ = 0;
  double pace_ = 1;
};

}  // namespace mixseq
