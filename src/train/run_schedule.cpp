#include "mixseq/train/run_schedule.h"

namespace mixseq {

namespace {
constexpr int64_t kUpdatesBeforeSizing = 20;  // updates of an invocation timed before the budget is sized
constexpr double kBudgetShareBeforeSizing = 0.05;  // or this share of train.max_time, without an epoch end first
}  // namespace

RunSchedule::RunSchedule(const TrainingSession& session, const LrScheduleOptions& options, double lr,
                         int64_t updates_per_epoch)
    : session_(session),
      options_(options),
      lr_(lr),
      most_steps_(planned_total_steps(session.options(), updates_per_epoch)),
      total_steps_(most_steps_),
      schedule_(options, lr, total_steps_) {}

void RunSchedule::after_update(int64_t step) {
  const double budget = session_.options().max_time;
  if (!sized_ && budget > 0 && step >= session_.first_step() + kUpdatesBeforeSizing &&
      session_.train_seconds() >= kBudgetShareBeforeSizing * budget)
    fit_to_time_budget();
}

void RunSchedule::at_epoch_end(int64_t step) {
  if (!sized_ && session_.options().max_time > 0 && step >= session_.first_step() + kUpdatesBeforeSizing)
    fit_to_time_budget();
}

void RunSchedule::fit_to_time_budget() {
  sized_ = true;
  const int64_t sized = session_.fit_to_time_budget(total_steps_, most_steps_);
  if (sized == total_steps_) return;
  total_steps_ = sized;
  schedule_ = LrSchedule(options_, lr_, total_steps_);
}

}  // namespace mixseq
