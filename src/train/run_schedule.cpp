#include "mixseq/train/run_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "mixseq/text/score_report.h"
#include "mixseq/util/log.h"

namespace mixseq {

namespace {
constexpr int64_t kUpdatesBeforeSizing = 20;  // updates of an invocation timed before the budget is sized
constexpr double kBudgetShareBeforeSizing = 0.05;  // or this share of train.max_time, without an epoch end first
constexpr double kCheckEvery = 0.1;  // after sizing: the speed is checked again at each such share of the budget
constexpr double kResizeBeyond = 0.02;  // re-sized when the updates that fit differ from the total by more than this share

// The next multiple of kCheckEvery above `share`.
double next_check_after(double share) { return (std::floor(share / kCheckEvery + 1e-9) + 1) * kCheckEvery; }
}  // namespace

RunSchedule::RunSchedule(TrainingSession& session, const LrScheduleOptions& options, double lr,
                         int64_t updates_per_epoch)
    : session_(session),
      options_(options),
      lr_(lr),
      most_steps_(planned_total_steps(session.options(), updates_per_epoch)),
      total_steps_(most_steps_),
      schedule_(options, lr, total_steps_),
      paced_(schedule_.depends_on_total()) {
  const auto& saved = session.progress().schedule_pace;
  if (saved.empty() || session.options().max_time <= 0) return;
  // A resumed run: the sizing it had (the checkpoint reader checked its kSchedulePaceValues
  // numbers), unless max_epochs or max_steps now allow fewer updates.
  sized_ = true;
  nominal_steps_ = std::llround(saved[0]);
  anchor_step_ = std::llround(saved[1]);
  anchor_position_ = saved[2];
  pace_ = saved[3];
  total_steps_ = std::min<int64_t>(most_steps_, std::llround(saved[4]));
  schedule_ = LrSchedule(options_, lr_, paced_ ? nominal_steps_ : total_steps_);
  next_check_ = next_check_after(session.progress().train_seconds / session.options().max_time);
  check_half_way_from(session.progress().step);
}

double RunSchedule::lr_at(int64_t step) const {
  if (!sized_ || !paced_) return schedule_.lr_at(step);
  return schedule_.lr_at(std::clamp<int64_t>(std::llround(position_at(step)), 0, nominal_steps_));
}

double RunSchedule::position_at(int64_t step) const {
  return anchor_position_ + static_cast<double>(step - anchor_step_) * pace_;
}

void RunSchedule::check_half_way_from(int64_t step) {
  next_check_step_ = step + std::max<int64_t>(1, (total_steps_ - step) / 2);
}

void RunSchedule::after_update(int64_t step) {
  const double budget = session_.options().max_time;
  if (budget <= 0) return;
  const double elapsed = session_.agreed_train_seconds();
  if (!sized_) {
    if (step >= session_.first_step() + kUpdatesBeforeSizing && elapsed >= kBudgetShareBeforeSizing * budget)
      size_to_time_budget();
  } else if (elapsed >= next_check_ * budget || step >= next_check_step_) {
    next_check_ = next_check_after(elapsed / budget);
    resize_to_time_budget(step);
  }
}

void RunSchedule::at_epoch_end(int64_t step) {
  if (!sized_ && session_.options().max_time > 0 && step >= session_.first_step() + kUpdatesBeforeSizing)
    size_to_time_budget();
}

// The first sizing: the schedule is built for the updates that fit, before its decay has begun.
void RunSchedule::size_to_time_budget() {
  sized_ = true;
  next_check_ = next_check_after(session_.agreed_train_seconds() / session_.options().max_time);
  const int64_t sized = session_.fit_to_time_budget(total_steps_, most_steps_);
  nominal_steps_ = sized;
  anchor_step_ = 0;
  anchor_position_ = 0;
  pace_ = 1;
  if (sized != total_steps_) {
    log_info("train: max_time ", session_.options().max_time, " s: ",
             format_decimal(session_.seconds_per_update() * 1e3, 0), " ms per update so far, schedule sized to ",
             sized, " updates");
    total_steps_ = sized;
    schedule_ = LrSchedule(options_, lr_, total_steps_);
  }
  save_sizing();
}

// Later: the same curve at another pace from `step` on, so that it ends at the new total.
void RunSchedule::resize_to_time_budget(int64_t step) {
  const int64_t fits = session_.fit_to_time_budget(total_steps_, most_steps_);
  if (std::abs(static_cast<double>(fits - total_steps_)) <= kResizeBeyond * static_cast<double>(total_steps_)) {
    check_half_way_from(step);
    return;
  }
  log_info("train: max_time ", session_.options().max_time, " s: ",
           fits < total_steps_ ? "slower" : "faster", " than measured (",
           format_decimal(session_.seconds_per_update() * 1e3, 0), " ms per update so far), schedule ",
           fits < total_steps_ ? "shortened" : "lengthened", " from ", total_steps_, " to ", fits, " updates");
  if (paced_) {
    anchor_position_ = std::min(position_at(step), static_cast<double>(nominal_steps_));
    anchor_step_ = step;
    pace_ = (static_cast<double>(nominal_steps_) - anchor_position_) / static_cast<double>(std::max<int64_t>(fits - step, 1));
  }
  total_steps_ = fits;
  save_sizing();
}

void RunSchedule::save_sizing() {
  check_half_way_from(session_.progress().step);
  session_.progress().schedule_pace = {static_cast<double>(nominal_steps_), static_cast<double>(anchor_step_),
                                       anchor_position_, pace_, static_cast<double>(total_steps_)};
}

}  // namespace mixseq
