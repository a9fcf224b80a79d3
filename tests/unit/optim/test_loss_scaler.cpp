#include "mixseq/optim/loss_scaler.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/optim/sgd.h>

#include <limits>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Two parameters with gradients set by hand.
struct ScaledParameters {
  at::Tensor weight = at::ones({2, 3}).requires_grad_();
  at::Tensor bias = at::ones({3}).requires_grad_();

  std::vector<at::Tensor> all() const { return {weight, bias}; }
  void set_gradients(float weight_grad, float bias_grad) {
    weight.mutable_grad() = at::full({2, 3}, weight_grad);
    bias.mutable_grad() = at::full({3}, bias_grad);
  }
};

LossScalerOptions options_with_interval(int64_t growth_interval) {
  LossScalerOptions options;
  options.growth_interval = growth_interval;
  return options;
}

TEST(DynamicLossScaler, ScalesTheLossAndUnscalesGradientsExactly) {
  DynamicLossScaler scaler({});
  EXPECT_EQ(scaler.current_scale(), 8192.0);  // NVIDIA GNMT's --init-scale
  const auto x = at::tensor({0.5f, -1.25f, 3.0f}).requires_grad_();
  const auto loss = (x * x).sum();
  scaler.scale(loss).backward();
  EXPECT_TRUE(x.grad().equal(8192.0 * 2.0 * x.detach()));
  scaler.unscale_({x});
  EXPECT_TRUE(x.grad().equal(2.0 * x.detach()));  // d(x²)/dx, bit for bit
}

TEST(DynamicLossScaler, FindsInfAndNanInAnyGradient) {
  ScaledParameters parameters;
  parameters.set_gradients(1.0f, -2.0f);
  EXPECT_FALSE(DynamicLossScaler::found_inf(parameters.all()));
  parameters.set_gradients(1.0f, std::numeric_limits<float>::infinity());
  EXPECT_TRUE(DynamicLossScaler::found_inf(parameters.all()));
  parameters.set_gradients(-std::numeric_limits<float>::infinity(), 0.0f);
  EXPECT_TRUE(DynamicLossScaler::found_inf(parameters.all()));
  parameters.set_gradients(std::numeric_limits<float>::quiet_NaN(), 1.0f);
  EXPECT_TRUE(DynamicLossScaler::found_inf(parameters.all()));
  // One element out of many, in fp16, next to a parameter without a gradient.
  auto half = at::zeros({1000}, at::kHalf).requires_grad_();
  half.mutable_grad() = at::zeros({1000}, at::kHalf);
  const auto no_grad = at::zeros({4}).requires_grad_();
  EXPECT_FALSE(DynamicLossScaler::found_inf({half, no_grad}));
  half.mutable_grad()[777] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(DynamicLossScaler::found_inf({half, no_grad}));
  // Large finite values are not an overflow (an L2 norm of these would be inf in fp32).
  parameters.set_gradients(3e38f, -3e38f);
  EXPECT_FALSE(DynamicLossScaler::found_inf(parameters.all()));
  EXPECT_FALSE(DynamicLossScaler::found_inf({no_grad}));
}

TEST(DynamicLossScaler, SkipsTheStepAndHalvesTheScaleOnOverflow) {
  ScaledParameters parameters;
  torch::optim::SGD optimizer(parameters.all(), torch::optim::SGDOptions(0.1));
  DynamicLossScaler scaler(options_with_interval(1000));
  // The trainer's step (loss_scaler.h) with scaled gradients injected in place of backward().
  const auto train_step = [&](float weight_grad, float bias_grad) {
    parameters.set_gradients(weight_grad * static_cast<float>(scaler.current_scale()),
                             bias_grad * static_cast<float>(scaler.current_scale()));
    scaler.unscale_(parameters.all());
    const bool overflow = DynamicLossScaler::found_inf(parameters.all());
    if (!overflow) optimizer.step();
    scaler.update(overflow);
  };

  train_step(1.0f, 1.0f);
  EXPECT_TRUE(parameters.weight.allclose(at::full({2, 3}, 0.9)));
  EXPECT_EQ(scaler.current_scale(), 8192.0);

  train_step(std::numeric_limits<float>::infinity(), 1.0f);
  EXPECT_TRUE(parameters.weight.allclose(at::full({2, 3}, 0.9)));  // skipped: weights unchanged
  EXPECT_TRUE(parameters.bias.allclose(at::full({3}, 0.9)));
  EXPECT_EQ(scaler.current_scale(), 4096.0);

  train_step(1.0f, std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(parameters.bias.allclose(at::full({3}, 0.9)));
  EXPECT_EQ(scaler.current_scale(), 2048.0);
  EXPECT_EQ(scaler.state().clean_steps, 0);

  train_step(1.0f, 1.0f);
  EXPECT_TRUE(parameters.weight.allclose(at::full({2, 3}, 0.8)));
  EXPECT_EQ(scaler.current_scale(), 2048.0);
}

TEST(DynamicLossScaler, DoublesAfterGrowthIntervalCleanStepsUpToMaxScale) {
  LossScalerOptions options = options_with_interval(3);
  options.init_scale = 8;
  options.max_scale = 32;
  DynamicLossScaler scaler(options);
  scaler.update(false);
  scaler.update(false);
  EXPECT_EQ(scaler.current_scale(), 8.0);
  scaler.update(false);  // third clean step in a row
  EXPECT_EQ(scaler.current_scale(), 16.0);
  EXPECT_EQ(scaler.state().clean_steps, 0);

  scaler.update(false);
  scaler.update(false);
  scaler.update(true);  // an overflow restarts the window
  EXPECT_EQ(scaler.current_scale(), 8.0);
  scaler.update(false);
  scaler.update(false);
  EXPECT_EQ(scaler.current_scale(), 8.0);
  scaler.update(false);
  EXPECT_EQ(scaler.current_scale(), 16.0);
  for (int i = 0; i < 9; ++i) scaler.update(false);
  EXPECT_EQ(scaler.current_scale(), 32.0);  // max_scale

  DynamicLossScaler fixed(options_with_interval(0));
  for (int i = 0; i < 1000; ++i) fixed.update(false);
  EXPECT_EQ(fixed.current_scale(), 8192.0);
}

TEST(DynamicLossScaler, StopsWhenTheScaleWouldFallBelowMinScale) {
  LossScalerOptions options;
  options.init_scale = 4;
  options.min_scale = 1;
  DynamicLossScaler scaler(options);
  scaler.update(true);
  scaler.update(true);
  EXPECT_EQ(scaler.current_scale(), 1.0);
  EXPECT_THROW(scaler.update(true), Error);
  EXPECT_EQ(scaler.current_scale(), 1.0);
}

TEST(DynamicLossScaler, ResumesExactlyFromItsState) {
  const LossScalerOptions options = options_with_interval(4);
  DynamicLossScaler original(options);
  for (const bool overflow : {false, false, true, false, false, false, false, false, false}) original.update(overflow);
  const LossScalerState saved = original.state();
  EXPECT_EQ(saved.scale, 8192.0);  // 8192 / 2 after the overflow, doubled after 4 clean steps
  EXPECT_EQ(saved.clean_steps, 2);

  DynamicLossScaler resumed(options);
  resumed.load_state(saved);
  for (const bool overflow : {false, false, false, true, false}) {
    original.update(overflow);
    resumed.update(overflow);
    EXPECT_EQ(resumed.current_scale(), original.current_scale());
    EXPECT_EQ(resumed.state().clean_steps, original.state().clean_steps);
  }
  EXPECT_THROW(resumed.load_state({-1.0, 0}), Error);
}

}  // namespace
}  // namespace mixseq
