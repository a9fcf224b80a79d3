#include "mixseq/train/run_schedule.h"

#include <algorithm>
#include <cmath>

#include "mixseq/text/score_report.h"
#include "mixseq/util/log.h"

namespace mixseq {

namespace {
constexpr int64_t kUpdatesBeforeSizing = 20;  // updates of an invocation timed before the budget is sized
constexpr double kBudgetShareBeforeSizing = 0.05;  // or this share of train.max_time, without an epoch end first
constexpr double kCheckEvery = 0.1;  // after sizing: the speed is checked again at each such share of the budget
constexpr double kShortenBelow = 0.98;  // shortened only when fewer than this share of the planned updates fit

// The next multiple of kCheckEvery above `share`.
double next_check_after(double share) { return (std::floor(share / kCheckEvery + 1e-9) + 1) * kCheckEvery; }
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
  if (budget <= 0) return;
  const double elapsed = session_.agreed_train_seconds();
  if (!sized_) {
    if (step >= session_.first_step() + kUpdatesBeforeSizing && elapsed >= kBudgetShareBeforeSizing * budget)
      fit_to_time_budget();
  } else if (elapsed >= next_check_ * budget) {
    next_check_ = next_check_after(elapsed / budget);
    shorten_to_time_budget();
  }
}

void RunSchedule::at_epoch_end(int64_t step) {
  if (!sized_ && session_.options().max_time > 0 && step >= session_.first_step() + kUpdatesBeforeSizing)
    fit_to_time_budget();
}

void RunSchedule::fit_to_time_budget() {
  sized_ = true;
  next_check_ = next_check_after(session_.agreed_train_seconds() / session_.options().max_time);
  const int64_t sized = session_.fit_to_time_budget(total_steps_, most_steps_);
  if (sized == total_steps_) return;
  log_info("train: max_time ", session_.options().max_time, " s: ",
           format_decimal(session_.seconds_per_update() * 1e3, 0), " ms per update so far, schedule sized to ", sized,
           " updates");
  use_total(sized);
}

void RunSchedule::shorten_to_time_budget() {
  const int64_t fits = session_.fit_to_time_budget(total_steps_, most_steps_);
  if (static_cast<double>(fits) >= kShortenBelow * static_cast<double>(total_steps_)) return;
  log_info("train: max_time ", session_.options().max_time, " s: slower than measured (",
           format_decimal(session_.seconds_per_update() * 1e3, 0), " ms per update so far), schedule shortened from ",
           total_steps_, " to ", fits, " updates");
  use_total(fits);
}

void RunSchedule::use_total(int64_t total_steps) {
  total_steps_ = total_steps;
  schedule_ = LrSchedule(options_, lr_, total_steps_);
}

}  // namespace mixseq
