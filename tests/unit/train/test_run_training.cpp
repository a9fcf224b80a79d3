// The one training loop with a task that has no tokens: a linear regression on float features,
// in micro-batches of rows. What the loop promises every task (train/run_training.h) is checked
// on it: updates and epochs, validation at intervals and epoch ends, the best model by the
// task's metric, patience, the carried state through a checkpoint and back, and the closed-form
// gradient step of the data it was given.
#include "mixseq/train/run_training.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <fstream>

#include "mixseq/models/checkpoint.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

// y = x . w for rows x of 2 features; 8 training rows in batches of 2 (4 updates an epoch, 2
// micro-batches of 1 row each), 2 validation rows. Its metric is the mean absolute error, lower
// is better, measured at every validation. It carries a count of the updates it made.
class RegressionTask : public TrainingTask {
 public:
  RegressionTask() {
    torch::manual_seed(3);
    model_ = torch::nn::Linear(torch::nn::LinearOptions(2, 1).bias(false));
    train_x_ = torch::arange(16, torch::kFloat).reshape({8, 2}) / 16.0;
    train_y_ = train_x_.matmul(torch::tensor({1.5f, -2.0f})).unsqueeze(1);
    valid_x_ = torch::tensor({{0.25f, 0.5f}, {1.0f, -1.0f}});
    valid_y_ = valid_x_.matmul(torch::tensor({1.5f, -2.0f})).unsqueeze(1);
  }

  torch::nn::Module& model() override { return *model_; }
  TaskMetric metric() const override { return {"mae", false, false}; }
  int64_t updates_per_epoch() const override { return 4; }
  bool can_validate() const override { return true; }
  CheckpointContents describe_data() const override { return {}; }
  std::string description() const override { return "regression"; }

  void start_epoch(const TrainingProgress&) override { ++epochs_started; }
  std::optional<int64_t> next_update(const TrainingProgress& progress) override {
    if (progress.epoch_batches >= 4) return std::nullopt;
    first_row_ = progress.epoch_batches * 2;
    return 2;
  }
  int64_t micro_batches() const override { return 2; }
  LossSums micro_batch_loss(int64_t micro) override {
    const auto x = train_x_.narrow(0, first_row_ + micro, 1), y = train_y_.narrow(0, first_row_ + micro, 1);
    const auto loss = (model_->forward(x) - y).pow(2).sum() / 2;
    return {loss, loss.detach(), 1, 0};
  }
  void finish_update(TrainingProgress& progress) override {
    ++progress.epoch_batches;
    ++carried;
  }
  bool epoch_ends_after(const TrainingProgress& progress) const override { return progress.epoch_batches >= 4; }
  bool epoch_complete(const TrainingProgress& progress) const override { return progress.epoch_batches >= 4; }
  void end_epoch(const TrainingProgress&) override { ++epochs_ended; }

  TaskValidation validate(bool with_metric) override {
    torch::NoGradGuard no_grad;
    const auto error = model_->forward(valid_x_) - valid_y_;
    TaskValidation result;
    result.loss = error.pow(2).sum().item<double>() / 2 / 2;
    result.metric = forced_metrics.empty() ? error.abs().mean().item<double>() : forced_metrics[validations];
    result.fields = {{"mae", *result.metric}};
    result.text = str_cat("loss ", result.loss, " | mae ", *result.metric);
    ++validations;
    return result;
  }

  void save_state(TrainingProgress& progress) override {
    progress.carried_state = {torch::tensor({static_cast<int64_t>(carried)})};
  }
  void restore_state(const TrainingProgress& progress) override {
    carried = progress.carried_state.empty() ? 0 : progress.carried_state.front().item<int64_t>();
  }

  torch::nn::Linear model_{nullptr};
  int epochs_started = 0, epochs_ended = 0, validations = 0, carried = 0;
  std::vector<double> forced_metrics;  // the metric of each validation, when set

 private:
  torch::Tensor train_x_, train_y_, valid_x_, valid_y_;
  int64_t first_row_ = 0;
};

TrainOptions options_in(const test::TempDir& dir) {
  TrainOptions options;
  options.run_dir = dir.path("run");
  options.device = "cpu";
  options.max_epochs = 2;
  options.log_interval = 1;
  options.validate_bleu = false;
  return options;
}

// Runs the whole set-up a task's run has (train/training_tasks.cpp) around `task`.
TrainSummary train(RegressionTask& task, const TrainOptions& options, RunStart start, double lr = 0.1) {
  TrainingSession session(options, DistributedConfig{}, start);
  OptimizerOptions optim;
  optim.name = "sgd";
  optim.lr = lr;
  auto optimizer = build_optimizer(optim, task.model().parameters());
  GradientClippingOptions clipping;
  clipping.max_norm = 0;
  UpdateStep update_step(task.model(), *optimizer, clipping, LossScalerOptions{}, session.precision(), session.device());
  session.begin("config: {}\n", "regression data", task.describe_data(), task.model(), *optimizer, update_step);
  task.restore_state(session.progress());
  LrScheduleOptions constant;
  constant.name = "constant";
  RunSchedule schedule(session, constant, lr, task.updates_per_epoch());
  session.open_run_directory("config: {}\n");
  return run_training(session, schedule, task, *optimizer, update_step);
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(RunTraining, RunsEpochsOfUpdatesAndValidatesAtEachEnd) {
  test::TempDir dir;
  RegressionTask task;
  const auto w0 = task.model_->weight.detach().clone();
  auto options = options_in(dir);
  options.max_epochs = 0;
  options.max_steps = 1;
  train(task, options, RunStart::kNew);
  // One SGD step on the first two rows, each its own micro-batch: the gradient of
  // sum((x.w - y)^2 / 2) over both, divided by the update's 2 targets.
  const auto x = torch::arange(4, torch::kFloat).reshape({2, 2}) / 16.0;
  const auto y = x.matmul(torch::tensor({1.5f, -2.0f}));
  const auto gradient = ((x.matmul(w0.squeeze(0)) - y).unsqueeze(1) * x).sum(0) / 2;
  EXPECT_TRUE(torch::allclose(task.model_->weight.detach().squeeze(0), w0.squeeze(0) - 0.1 * gradient, 1e-6, 1e-7));

  test::TempDir dir2;
  RegressionTask task2;
  const auto summary = train(task2, options_in(dir2), RunStart::kNew);
  EXPECT_EQ(summary.steps, 8);
  EXPECT_EQ(summary.epochs, 2);
  EXPECT_EQ(summary.metric, "mae");
  EXPECT_EQ(task2.epochs_started, 2);
  EXPECT_EQ(task2.epochs_ended, 2);
  EXPECT_EQ(task2.validations, 2);  // at each epoch's end, once
  EXPECT_EQ(task2.carried, 8);
  int train_records = 0, valid_records = 0;
  for (const auto& line : lines_of(dir2.path("run/metrics.jsonl"))) {
    train_records += line.find("\"kind\":\"train\"") != std::string::npos;
    valid_records += line.find("\"kind\":\"valid\"") != std::string::npos && line.find("\"mae\"") != std::string::npos;
  }
  EXPECT_EQ(train_records, 8);
  EXPECT_EQ(valid_records, 2);
  EXPECT_TRUE(std::filesystem::exists(dir2.path("run/checkpoint_best.pt")));
  // The best checkpoint is for evaluation: nothing carried; the last one carries the count.
  EXPECT_TRUE(read_checkpoint_contents(dir2.path("run/checkpoint_best.pt")).progress.carried_state.empty());
  const auto last = read_checkpoint_contents(dir2.path("run/checkpoint_last.pt")).progress;
  ASSERT_EQ(last.carried_state.size(), 1u);
  EXPECT_EQ(last.carried_state.front().item<int64_t>(), 8);
  EXPECT_EQ(last.step, 8);
  EXPECT_EQ(last.epoch, 3);
}

// Interval validations skip the update that ends an epoch (validated there with the metric), and
// the best model follows the task's metric, lower being better here.
TEST(RunTraining, PicksTheBestModelByTheTasksMetricAndStopsOutOfPatience) {
  test::TempDir dir;
  RegressionTask task;
  task.forced_metrics = {0.5, 0.4, 0.45, 0.41, 0.6, 0.7};
  auto options = options_in(dir);
  options.max_epochs = 3;
  options.validate_interval = 2;  // updates 2 and 6 inside epochs; 4, 8 and 12 end them
  options.patience = 2;
  const auto summary = train(task, options, RunStart::kNew);
  // Validations at updates 2 (0.5), 4 (0.4, best), 6 (0.45), 8 (0.41): two without improvement.
  EXPECT_EQ(task.validations, 4);
  EXPECT_TRUE(summary.out_of_patience);
  EXPECT_EQ(summary.steps, 8);
  EXPECT_DOUBLE_EQ(summary.best_score, 0.4);
  EXPECT_EQ(read_checkpoint_contents(dir.path("run/checkpoint_best.pt")).progress.step, 4);
}

// Stopped after 5 updates and resumed, the task gets its carried state back and the run ends
// with the weights of one that never stopped.
TEST(RunTraining, ResumesWithTheTasksCarriedState) {
  test::TempDir whole_dir, split_dir;
  RegressionTask whole;
  train(whole, options_in(whole_dir), RunStart::kNew);

  RegressionTask first;
  auto options = options_in(split_dir);
  options.max_epochs = 0;
  options.max_steps = 5;
  options.save_interval = 1;
  train(first, options, RunStart::kNew);
  RegressionTask second;
  auto resumed_options = options_in(split_dir);
  const auto summary = train(second, resumed_options, RunStart::kResume);
  EXPECT_EQ(summary.steps, 8);
  EXPECT_EQ(second.carried, 8);  // 5 restored + 3 made
  EXPECT_TRUE(torch::equal(second.model_->weight, whole.model_->weight));
}

}  // namespace
}  // namespace mixseq
