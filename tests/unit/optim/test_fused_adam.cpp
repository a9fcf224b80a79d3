// FusedAdam against LibTorch's Adam step by step (parameters and moments), with and without
// weight decay, over sizes that leave tails after the vector loops and split into parallel
// tasks; and the fallback to LibTorch's step for parameters the loop does not take.
#include "mixseq/optim/fused_adam.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "util/torch_compat.h"

namespace mixseq {
namespace {

std::vector<at::Tensor> random_parameters(at::ScalarType dtype) {
  std::vector<at::Tensor> parameters;
  for (const int64_t n : {1, 37, 70001}) parameters.push_back(at::randn({n}, dtype).requires_grad_());
  parameters.push_back(at::randn({3, 5}, dtype).requires_grad_());
  return parameters;
}

std::vector<at::Tensor> copies(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> copied;
  for (const auto& p : parameters) copied.push_back(p.detach().clone().requires_grad_());
  return copied;
}

// Five steps of both optimizers on the same gradients; the last parameter gets none in step 2.
void expect_same_steps(at::ScalarType dtype, double weight_decay, double tolerance) {
  at::manual_seed(1);
  const auto options = torch::optim::AdamOptions(1e-2).betas({0.9, 0.98}).eps(1e-8).weight_decay(weight_decay);
  const auto ours = random_parameters(dtype), theirs = copies(ours);
  FusedAdam fused(ours, options);
  torch::optim::Adam reference(theirs, options);
  for (int step = 0; step < 5; ++step) {
    for (size_t i = 0; i < ours.size(); ++i) {
      if (step == 2 && i + 1 == ours.size()) continue;
      const auto grad = at::randn_like(ours[i]) * static_cast<double>(i + 1);
      ours[i].mutable_grad() = grad.clone();
      theirs[i].mutable_grad() = grad.clone();
    }
    fused.step();
    reference.step();
    fused.zero_grad();
    reference.zero_grad();
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_TRUE(at::allclose(ours[i], theirs[i], tolerance, tolerance))
        << i << ": " << (ours[i] - theirs[i]).abs().max();
    const auto& our_state = static_cast<torch::optim::AdamParamState&>(
        *fused.state().at(compat::optimizer_state_key(fused.state(), ours[i])));
    const auto& their_state = static_cast<torch::optim::AdamParamState&>(
        *reference.state().at(compat::optimizer_state_key(reference.state(), theirs[i])));
    EXPECT_EQ(our_state.step(), their_state.step());
    EXPECT_TRUE(at::allclose(our_state.exp_avg(), their_state.exp_avg(), tolerance, tolerance)) << i;
    EXPECT_TRUE(at::allclose(our_state.exp_avg_sq(), their_state.exp_avg_sq(), tolerance, tolerance)) << i;
  }
}

TEST(FusedAdam, StepsAsLibTorchsAdam) { expect_same_steps(at::kFloat, 0.0, 1e-6); }

TEST(FusedAdam, StepsAsLibTorchsAdamWithWeightDecay) { expect_same_steps(at::kFloat, 0.01, 1e-6); }

TEST(FusedAdam, TakesLibTorchsStepForOtherDtypes) { expect_same_steps(at::kDouble, 0.01, 0.0); }

// The fused step writes the weights through their data, and moves their version counters as an
// in-place op would: copies kept while a weight is unchanged (nn/cpu_float_linear.h's
// TransposedWeight, nn/lstm_recurrence.h's LstmPanelCache) are made again after it.
TEST(FusedAdam, AStepMovesEachWeightsVersionCounter) {
  auto w = at::randn({300}).requires_grad_();
  FusedAdam adam({w}, torch::optim::AdamOptions(1e-3));
  w.mutable_grad() = at::randn({300});
  const auto before = w._version();
  adam.step();
  EXPECT_GT(w._version(), before);
}

TEST(FusedAdam, IsATorchAdamForCheckpointsAndLearningRates) {
  auto parameter = at::randn({4}).requires_grad_();
  FusedAdam optimizer({parameter}, torch::optim::AdamOptions(1e-3));
  EXPECT_NE(dynamic_cast<torch::optim::Adam*>(&optimizer), nullptr);
  static_cast<torch::optim::AdamOptions&>(optimizer.param_groups()[0].options()).lr(5e-4);
  EXPECT_DOUBLE_EQ(optimizer.param_groups()[0].options().get_lr(), 5e-4);
}

}  // namespace
}  // namespace mixseq
