#include "mixseq/train/run_training.h"

#include <chrono>

#include "mixseq/optim/optimizer.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/stop_request.h"

namespace mixseq {
namespace {

using Clock = std::chrono::steady_clock;

// `value` improves on `best` (-1: none yet).
bool improves(const TaskMetric& metric, double value, double best) {
  if (best < 0) return true;
  return metric.higher_is_better ? value > best : value < best;
}

}  // namespace

TrainSummary run_training(TrainingSession& session, RunSchedule& schedule, TrainingTask& task,
                          torch::optim::Optimizer& optimizer, UpdateStep& update_step) {
  const TrainOptions& options = session.options();
  TrainingProgress& progress = session.progress();
  const TaskMetric metric = task.metric();
  const bool can_validate = task.can_validate();
  // The best checkpoint has the best value of the task's metric (BLEU for translation), or the
  // lowest validation loss: fairseq's best_checkpoint_metric and Marian's first valid-metric.
  const std::string best_metric = options.best_metric == "auto" ? metric.name : options.best_metric;
  MIXSEQ_CHECK(best_metric == "loss" || best_metric == metric.name, "train.best_metric '", options.best_metric,
               "' is not measured by this task; choose auto, loss", metric.name == "loss" ? "" : " or " + metric.name);
  const bool best_by_metric = best_metric != "loss";

  TrainSummary summary;
  summary.metric = metric.name;
  summary.epochs = progress.epoch - 1;  // completed by the runs this one resumes
  bool stopping = false;
  if (session.patience_exhausted()) {
    log_info("train: train.patience (", options.patience, ") was used up before: nothing to train");
    stopping = true;
  }
  const auto save_last = [&] {
    task.save_state(progress);
    session.save_last();
  };
  const auto save_best = [&] {
    progress.carried_state.clear();  // the best model is for evaluation: nothing carried in it
    session.save_best();
  };
  // An interval validation can fall on the update after which train.max_time ends the run, which
  // is validated again (with the metric): the same model is not validated twice without need,
  // nor counted twice for train.patience.
  int64_t validated_step = -1, counted_step = -1;
  bool validated_with_metric = false;
  const auto validate = [&](bool with_metric) {
    with_metric = with_metric || !metric.costly;
    if (progress.step == validated_step && (validated_with_metric || !with_metric)) return;
    validated_step = progress.step, validated_with_metric = with_metric;
    const auto started = Clock::now();
    const TaskValidation valid = task.validate(with_metric);
    summary.last_valid_loss = valid.loss;
    ++summary.validations;
    nlohmann::json record = {{"kind", "valid"}, {"epoch", progress.epoch},        {"step", progress.step},
                             {"loss", valid.loss}, {"ppl", valid.perplexity}, {"train_s", session.train_seconds()}};
    record.update(valid.fields);
    std::string line = str_cat("valid | epoch ", progress.epoch, " | step ", progress.step, " | ", valid.text);
    bool best = false;
    if (valid.metric) {
      const double value = *valid.metric;
      const bool better = improves(metric, value, progress.best_score);
      if (better) progress.best_score = value;
      if (best_by_metric) best = better;
      summary.best_score = progress.best_score;
      if (options.target_bleu > 0 && metric.name == "bleu" && value >= options.target_bleu) {
        summary.reached_target = true;
        stopping = true;
        line += str_cat(" | reached train.target_bleu ", options.target_bleu);
      }
    }
    if (!best_by_metric) {
      best = progress.best_loss < 0 || valid.loss < progress.best_loss;
      if (best) progress.best_loss = valid.loss;
    }
    if (best) {
      save_best();
      line += " (best)";
    }
    const bool measured_best_metric = valid.metric.has_value() || !best_by_metric;
    if (measured_best_metric && progress.step != counted_step) {
      counted_step = progress.step;
      if (session.note_validation(best)) {
        stopping = true;
        summary.out_of_patience = true;
        line += str_cat(" | no better ", best_metric, " in ", options.patience,
                        " validations (train.patience): stopping");
      }
    }
    session.set_validation_seconds(std::chrono::duration<double>(Clock::now() - started).count());
    session.metrics().write(record, line);
  };

  session.set_units(task.units());
  std::vector<double> lr_scales;  // of the optimizer's groups (the task's parameter_groups)
  for (const auto& group : task.parameter_groups()) lr_scales.push_back(group.lr_scale);
  task.model().train();
  // A finished run resumed: say why nothing happens. A schedule sized to train.max_time has decayed
  // to its end and is not reopened; otherwise train.max_epochs and train.max_steps decide.
  if (progress.step > 0 && progress.step >= schedule.total_steps() && session.parallel().leader())
    log_info("train: the resumed run has made all of its ", schedule.total_steps(), " updates",
             options.max_time > 0 && !progress.schedule_pace.empty()
                 ? " (its schedule was sized to train.max_time when it ran; a schedule whose learning rate has "
                   "decayed is not reopened, so a larger train.max_time, max_steps or max_epochs does not extend it)"
                 : " (all that train.max_epochs and train.max_steps allow)",
             "; nothing to train: start a new run to train further");
  while (progress.step < schedule.total_steps() && !stopping) {
    task.start_epoch(progress);
    bool time_is_up = false;
    while (progress.step < schedule.total_steps() && !stopping) {
      const auto targets = task.next_update(progress);
      if (!targets) break;
      const auto agreed = session.agree_on_update(*targets);
      if (agreed.stop_signal != 0) {
        summary.stop_signal = agreed.stop_signal;
        stopping = true;
        break;
      }
      if (agreed.out_of_time) {
        time_is_up = true;
        break;
      }
      const double lr = schedule.lr_at(progress.step);
      set_learning_rate(optimizer, lr, lr_scales);
      const auto update = update_step.run(
          task.micro_batches(), [&](int64_t micro) { return task.micro_batch_loss(micro); }, agreed.update_tokens);
      ++progress.step;
      task.finish_update(progress);
      session.record_update(update, lr, schedule.total_steps());
      // The update that ends the epoch or the run is validated below, with the metric.
      const bool last_of_epoch_or_run = task.epoch_ends_after(progress) || progress.step >= schedule.total_steps();
      if (can_validate && options.validate_interval > 0 && progress.step % options.validate_interval == 0 &&
          !last_of_epoch_or_run)
        validate(/*with_metric=*/false);
      if (options.save_interval > 0 && progress.step % options.save_interval == 0) save_last();
      schedule.after_update(progress.step);
    }
    const bool epoch_complete = task.epoch_complete(progress);
    // A run that ends inside an epoch (max_steps, max_time) validates its final model too.
    const bool ending = time_is_up || (progress.step >= schedule.total_steps() && !stopping);
    if ((epoch_complete || ending) && can_validate) validate(/*with_metric=*/true);
    if (epoch_complete) {
      summary.epochs = progress.epoch;
      ++progress.epoch;
      progress.epoch_batches = 0;
      task.end_epoch(progress);
      schedule.at_epoch_end(progress.step);
    }
    if (time_is_up) stopping = true;
    save_last();
  }
  if (!can_validate && summary.stop_signal == 0 && stop_signal() == 0 && progress.step > session.first_step()) {
    // Nothing to choose a best model by: the final one is it, so that the usual
    // `translate -c <run_dir>/checkpoint_best.pt` works.
    save_best();
    if (session.parallel().leader())
      log_info("train: no validation split: ", best_checkpoint_path(options.run_dir),
               " is the final model, the same as checkpoint_last.pt");
  }
  if (summary.stop_signal == 0) summary.stop_signal = stop_signal();  // one that came after the last update
  summary.steps = progress.step;
  summary.best_score = progress.best_score;
  summary.best_loss = progress.best_loss;
  summary.seconds = session.seconds();
  return summary;
}

}  // namespace mixseq
