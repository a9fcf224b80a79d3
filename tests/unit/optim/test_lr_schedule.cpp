#include "mixseq/optim/lr_schedule.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

LrScheduleOptions schedule_named(const std::string& name) {
  LrScheduleOptions options;
  options.name = name;
  return options;
}

// Relative comparison for learning rates that span many orders of magnitude.
void expect_lr(double actual, double expected) { EXPECT_NEAR(actual, expected, 1e-12 * expected) << "expected " << expected; }

TEST(LrSchedule, GnmtStepWarmsUpExponentiallyThenDecaysFourTimes) {
  // GNMT defaults over 3000 updates: warmup 200, decay from counter int(0.666 * 3000) = 1998,
  // every (3000 - 1998) / 4 = 250 counts, 4 halvings. Update `step` runs at counter step + 1.
  const double lr = 2e-3;
  const LrSchedule schedule(schedule_named("gnmt_step"), lr, 3000);
  // Counter 1: lr · 0.01^(199/200); the value NVIDIA's scheduler gives its first update.
  EXPECT_DOUBLE_EQ(schedule.lr_at(0), 2.0465859845615032e-05);
  expect_lr(schedule.lr_at(99), lr * 0.1);  // counter 100: 0.01^(100/200) = 0.1
  expect_lr(schedule.lr_at(199), lr);       // counter 200: end of warmup
  expect_lr(schedule.lr_at(200), lr);
  expect_lr(schedule.lr_at(1996), lr);      // counter 1997: last update before decay
  expect_lr(schedule.lr_at(1997), lr / 2);  // counter 1998: first decay
  expect_lr(schedule.lr_at(2246), lr / 2);
  expect_lr(schedule.lr_at(2247), lr / 4);  // counter 2248 = 1998 + 250
  expect_lr(schedule.lr_at(2497), lr / 8);
  expect_lr(schedule.lr_at(2747), lr / 16);
  expect_lr(schedule.lr_at(2999), lr / 16);  // at most decay_steps = 4 decays
  expect_lr(schedule.lr_at(100000), lr / 16);
}

TEST(LrSchedule, GnmtStepCountsAndFractions) {
  LrScheduleOptions options = schedule_named("gnmt_step");
  options.gnmt_step.warmup_steps = 0.1;  // 100 of 1000 updates
  options.gnmt_step.remain_steps = 500;
  options.gnmt_step.decay_interval = 100;
  options.gnmt_step.decay_steps = 2;
  const LrSchedule schedule(options, 1.0, 1000);
  expect_lr(schedule.lr_at(98), std::pow(0.01, 1.0 / 100.0));
  expect_lr(schedule.lr_at(99), 1.0);
  expect_lr(schedule.lr_at(498), 1.0);
  expect_lr(schedule.lr_at(499), 0.5);
  expect_lr(schedule.lr_at(599), 0.25);
  expect_lr(schedule.lr_at(999), 0.25);

  // A warmup longer than the constant phase is cut to end where decay starts (counter 300).
  options.gnmt_step.warmup_steps = 400;
  options.gnmt_step.remain_steps = 300;
  const LrSchedule cut(options, 1.0, 1000);
  expect_lr(cut.lr_at(298), std::pow(0.01, 1.0 / 300.0));
  expect_lr(cut.lr_at(299), 1.0);
  expect_lr(cut.lr_at(300), 0.5);

  options.gnmt_step.decay_steps = 0;
  expect_lr(LrSchedule(options, 1.0, 1000).lr_at(900), 1.0);
  options.gnmt_step.warmup_steps = 0;
  expect_lr(LrSchedule(options, 1.0, 1000).lr_at(0), 1.0);
}

TEST(LrSchedule, InverseSqrtWarmsUpLinearlyThenDecaysAsOneOverSqrtStep) {
  const double lr = 5e-4;  // warmup_updates 4000, warmup_init_lr 1e-7
  const LrSchedule schedule(schedule_named("inverse_sqrt"), lr, 100000);
  expect_lr(schedule.lr_at(0), 1e-7);
  expect_lr(schedule.lr_at(2000), 1e-7 + 0.5 * (lr - 1e-7));
  expect_lr(schedule.lr_at(4000), lr);                   // end of warmup: lr · sqrt(4000 / 4000)
  expect_lr(schedule.lr_at(8000), lr / std::sqrt(2.0));  // 2 · warmup
  expect_lr(schedule.lr_at(16000), lr / 2);
}

TEST(LrSchedule, CosineWarmsUpLinearlyThenFollowsHalfACosineToEtaMin) {
  LrScheduleOptions options = schedule_named("cosine");  // warmup_steps 1000, eta_min 0.001
  const double lr = 0.01;
  const LrSchedule schedule(options, lr, 10000);
  EXPECT_EQ(schedule.lr_at(0), 0.0);
  expect_lr(schedule.lr_at(500), lr / 2);
  expect_lr(schedule.lr_at(1000), lr);                      // end of warmup, cos(0) = 1
  expect_lr(schedule.lr_at(5500), 0.001 + (lr - 0.001) / 2);  // midpoint of the decay, cos(π/2) = 0
  expect_lr(schedule.lr_at(10000), 0.001);                  // cos(π) = -1
  expect_lr(schedule.lr_at(20000), 0.001);
}

// OpenSeq2Seq's en-de-convs2s: learning_rate 9, d_model 512, warmup_steps 4000, max_lr 1e-3.
// Values by hand from lr_policies.py's formula, 9 · 512^-0.5 · min(t · 4000^-1.5, t^-0.5), t = step + 1.
TEST(LrSchedule, TransformerPolicyIsOpenSeq2SeqsNoamRateUnderItsHat) {
  LrScheduleOptions options = schedule_named("transformer_policy");
  options.transformer_policy.d_model = 512;
  options.transformer_policy.warmup_steps = 4000;
  const LrSchedule no_hat(options, 9.0, 0);
  expect_lr(no_hat.lr_at(0), 1.57223529667954e-06);
  expect_lr(no_hat.lr_at(99), 0.00015722352966795398);
  expect_lr(no_hat.lr_at(3999), 0.006288941186718159);   // the peak: t = warmup_steps
  expect_lr(no_hat.lr_at(7999), 0.004446952959611784);   // then t^-0.5
  expect_lr(no_hat.lr_at(199999), 0.0008893905919223568);
  options.transformer_policy.max_lr = 1e-3;
  const LrSchedule hat(options, 9.0, 0);
  expect_lr(hat.lr_at(99), 0.00015722352966795398);      // below the hat: unchanged
  EXPECT_EQ(hat.lr_at(635), std::min(1e-3, no_hat.lr_at(635)));
  EXPECT_LT(hat.lr_at(634), 1e-3);                         // t = 635 < 636.04, where warmup reaches the hat
  EXPECT_EQ(hat.lr_at(636), 1e-3);
  EXPECT_EQ(hat.lr_at(3999), 1e-3);
  expect_lr(hat.lr_at(199999), 0.0008893905919223568);   // back under it after t = 158,203
  options.transformer_policy.coefficient = 0.5;
  expect_lr(LrSchedule(options, 9.0, 0).lr_at(0), 0.5 * 1.57223529667954e-06);
  EXPECT_FALSE(hat.depends_on_total());
}

TEST(LrSchedule, ConstantIsTheLearningRateEverywhere) {
  const LrSchedule schedule(schedule_named("constant"), 3e-4, 0);
  EXPECT_EQ(schedule.lr_at(0), 3e-4);
  EXPECT_EQ(schedule.lr_at(1000000), 3e-4);
}

TEST(LrSchedule, RejectsOptionsThatMakeNoSchedule) {
  EXPECT_THROW(LrSchedule(schedule_named("linear"), 1.0, 100), Error);
  EXPECT_THROW(LrSchedule(schedule_named("cosine"), 1.0, 0), Error);  // needs the training length
  LrScheduleOptions options = schedule_named("cosine");
  options.cosine.warmup_steps = 100;
  EXPECT_THROW(LrSchedule(options, 1.0, 100), Error);
  options.cosine.warmup_steps = 10;
  options.cosine.eta_min = 2.0;
  EXPECT_THROW(LrSchedule(options, 1.0, 100), Error);
  options = schedule_named("inverse_sqrt");
  options.inverse_sqrt.warmup_updates = 0;
  EXPECT_THROW(LrSchedule(options, 1.0, 100), Error);
  options = schedule_named("transformer_policy");
  options.transformer_policy.warmup_steps = 0;
  EXPECT_THROW(LrSchedule(options, 1.0, 100), Error);
  options.transformer_policy.warmup_steps = 4000;
  options.transformer_policy.d_model = 0;
  EXPECT_THROW(LrSchedule(options, 1.0, 100), Error);
  options.transformer_policy.d_model = 512;
  options.transformer_policy.max_lr = -1e-3;
  EXPECT_THROW(LrSchedule(options, 1.0, 100), Error);
  options = schedule_named("gnmt_step");
  options.gnmt_step.remain_steps = 1.5;
  EXPECT_THROW(LrSchedule(options, 1.0, 100), Error);
  options.gnmt_step.remain_steps = 0.5;
  options.gnmt_step.decay_interval = 0.001;  // rounds to 0 updates out of 100
  EXPECT_THROW(LrSchedule(options, 1.0, 100), Error);
  EXPECT_THROW(LrSchedule(schedule_named("constant"), 1.0, 100).lr_at(-1), Error);
}

TEST(LrSchedule, ReadsItsSectionFromYaml) {
  LrScheduleOptions options;
  read_config_yaml("name: inverse_sqrt\ninverse_sqrt: {warmup_updates: 10, warmup_init_lr: 0}\n", "t.yaml",
                   [&](ConfigVisitor& v) { options.visit(v); });
  const LrSchedule schedule(options, 1.0, 0);
  expect_lr(schedule.lr_at(5), 0.5);
  expect_lr(schedule.lr_at(40), 0.5);
}

TEST(LrSchedule, SetLearningRateReachesEveryParameterGroup) {
  const auto a = at::zeros({2}), b = at::zeros({3});
  torch::optim::SGD optimizer({torch::optim::OptimizerParamGroup({a}), torch::optim::OptimizerParamGroup({b})},
                              torch::optim::SGDOptions(0.1));
  set_learning_rate(optimizer, 0.25);
  ASSERT_EQ(optimizer.param_groups().size(), 2u);
  for (const auto& group : optimizer.param_groups()) EXPECT_EQ(group.options().get_lr(), 0.25);
}

}  // namespace
}  // namespace mixseq
