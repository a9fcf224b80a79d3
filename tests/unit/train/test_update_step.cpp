#include "mixseq/train/update_step.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "test_support.h"

namespace mixseq {
namespace {

// A linear model whose summed loss over a micro-batch x [N, 3] is sum(model(x)): its gradient
// is known in closed form.
struct LinearTask {
  torch::nn::Linear model{torch::nn::LinearOptions(3, 1).bias(false)};
  torch::optim::SGD optimizer{model->parameters(), torch::optim::SGDOptions(0.5)};
  std::vector<torch::Tensor> inputs = {torch::tensor({{1.0f, 2.0f, 3.0f}}),
                                       torch::tensor({{0.5f, -1.0f, 4.0f}, {2.0f, 0.0f, 1.0f}})};

  LossSums loss_of(int64_t micro, double scale = 1.0) {
    const auto loss = model->forward(inputs[micro]).sum() * scale;
    return {loss, loss.detach(), inputs[micro].size(0), /*source_tokens=*/10};
  }
};

GradientClippingOptions no_clipping() {
  GradientClippingOptions options;
  options.max_norm = 0;
  return options;
}

// Gradient accumulation: the step follows the gradient of the sum of the micro-batches' losses,
// divided by the targets of the whole update, whatever the split.
TEST(UpdateStep, AccumulatesMicroBatchesPerTargetOfTheUpdate) {
  LinearTask task;
  const auto before = task.model->weight.detach().clone();
  UpdateStep step(*task.model, task.optimizer, no_clipping(), LossScalerOptions{}, Precision::kFp32, torch::kCPU);
  const auto result = step.run(2, [&](int64_t micro) { return task.loss_of(micro); }, /*update_tokens=*/4);

  const auto gradient = (task.inputs[0].sum(0) + task.inputs[1].sum(0)) / 4.0;  // d(sum W x)/dW, per target
  EXPECT_TRUE(torch::allclose(task.model->weight.detach(), before - 0.5 * gradient.unsqueeze(0)));
  EXPECT_FALSE(result.skipped);
  EXPECT_EQ(result.target_tokens, 3);
  EXPECT_EQ(result.source_tokens, 20);
  EXPECT_NEAR(result.loss.item<double>(), (before.matmul(torch::cat(task.inputs).t())).sum().item<double>(), 1e-5);
  EXPECT_FALSE(task.model->weight.grad().defined());  // released for the next update
}

// As in fairseq: a parameter no micro-batch of an update reached keeps its value, even under
// Adam with momentum from earlier updates (zeroed gradients would have stepped it).
TEST(UpdateStep, LeavesAParameterNoBatchReachedAsItIs) {
  torch::nn::Linear used(torch::nn::LinearOptions(3, 1)), sometimes(torch::nn::LinearOptions(3, 1));
  torch::nn::Sequential model(used, sometimes);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(0.1));
  UpdateStep step(*model, optimizer, no_clipping(), LossScalerOptions{}, Precision::kFp32, torch::kCPU);
  const auto x = torch::tensor({{1.0f, 2.0f, 3.0f}});
  const auto loss_of = [&](bool both) {
    const auto loss = used->forward(x).sum() + (both ? sometimes->forward(x).sum() : torch::zeros({}));
    return LossSums{loss, loss.detach(), 1, 1};
  };
  step.run(1, [&](int64_t) { return loss_of(true); }, 1);
  const auto after_first = sometimes->weight.detach().clone();
  const auto used_before = used->weight.detach().clone();
  step.run(1, [&](int64_t) { return loss_of(false); }, 1);
  EXPECT_TRUE(torch::equal(sometimes->weight.detach(), after_first));
  EXPECT_FALSE(torch::equal(used->weight.detach(), used_before));
}

// fp16: gradients that overflow once scaled skip the step and halve the loss scale.
TEST(UpdateStep, SkipsAnOverflowingUpdateAndHalvesTheScale) {
  LinearTask task;
  const auto before = task.model->weight.detach().clone();
  UpdateStep step(*task.model, task.optimizer, no_clipping(), LossScalerOptions{}, Precision::kFp16, torch::kCPU);
  ASSERT_TRUE(step.scaling());
  const auto result = step.run(1, [&](int64_t micro) { return task.loss_of(micro, 1e36); }, 1);
  EXPECT_TRUE(result.skipped);
  EXPECT_TRUE(torch::equal(task.model->weight.detach(), before));
  EXPECT_DOUBLE_EQ(step.loss_scaler().current_scale(), LossScalerOptions{}.init_scale / 2);
}

TEST(UpdateStep, NeedsAMicroBatchAndATargetToken) {
  LinearTask task;
  UpdateStep step(*task.model, task.optimizer, no_clipping(), LossScalerOptions{}, Precision::kFp32, torch::kCPU);
  const auto forward_loss = [&](int64_t micro) { return task.loss_of(micro); };
  EXPECT_NE(test::error_of([&] { step.run(0, forward_loss, 4); }).find("at least one micro-batch"), std::string::npos);
  EXPECT_NE(test::error_of([&] { step.run(1, forward_loss, 0); }).find("one target token (got 0)"), std::string::npos);
}

}  // namespace
}  // namespace mixseq
