#include "mixseq/optim/optimizer.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "mixseq/optim/lamb.h"
#include "mixseq/optim/lr_schedule.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

std::vector<at::Tensor> make_parameters() {
  at::manual_seed(7);
  return {at::randn({4, 3}).requires_grad_(), at::randn({3}).requires_grad_()};
}

std::vector<at::Tensor> copies_of(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> result;
  for (const auto& p : parameters) result.push_back(p.detach().clone().requires_grad_());
  return result;
}

// Runs `steps` updates of both optimizers with the same pseudo-random gradients and expects the
// same parameters, bit for bit.
void expect_same_trajectory(torch::optim::Optimizer& a, const std::vector<at::Tensor>& a_parameters,
                            torch::optim::Optimizer& b, const std::vector<at::Tensor>& b_parameters, int steps) {
  for (int step = 0; step < steps; ++step) {
    for (size_t i = 0; i < a_parameters.size(); ++i) {
      const auto gradient = at::randn(a_parameters[i].sizes());
      a_parameters[i].mutable_grad() = gradient.clone();
      b_parameters[i].mutable_grad() = gradient.clone();
    }
    a.step();
    b.step();
  }
  for (size_t i = 0; i < a_parameters.size(); ++i) {
    EXPECT_TRUE(a_parameters[i].equal(b_parameters[i])) << "parameter " << i;
    EXPECT_FALSE(a_parameters[i].equal(make_parameters()[i])) << "parameter " << i << " never moved";
  }
}

TEST(BuildOptimizer, AdamIsLibTorchAdamWithGnmtDefaults) {
  OptimizerOptions options;
  options.weight_decay = 0.01;
  const auto ours = make_parameters();
  const auto optimizer = build_optimizer(options, ours);
  const auto* adam = dynamic_cast<torch::optim::Adam*>(optimizer.get());
  ASSERT_NE(adam, nullptr);
  const auto& built = static_cast<const torch::optim::AdamOptions&>(adam->param_groups()[0].options());
  EXPECT_EQ(built.lr(), 2e-3);
  EXPECT_EQ(built.betas(), std::make_tuple(0.9, 0.999));
  EXPECT_EQ(built.eps(), 1e-8);
  EXPECT_FALSE(built.amsgrad());

  const auto theirs = copies_of(ours);
  torch::optim::Adam direct(theirs, torch::optim::AdamOptions(2e-3).weight_decay(0.01));
  expect_same_trajectory(*optimizer, ours, direct, theirs, 3);
}

// AdamW decays the weights apart from the moments (fairseq's Adam with --weight-decay): one
// step by hand, p1 = p0 (1 - lr wd) - lr m^ / (sqrt(v^) + eps), with m^ = g and v^ = g^2 after
// bias correction. Adam's L2 decay would put wd p0 into the gradient instead.
TEST(BuildOptimizer, AdamwDecaysWeightsApartFromTheMoments) {
  OptimizerOptions options;
  options.name = "adamw";
  options.lr = 0.1;
  options.weight_decay = 0.5;
  const auto parameters = make_parameters();
  const auto before = parameters[0].detach().clone();
  const auto optimizer = build_optimizer(options, parameters);
  ASSERT_NE(dynamic_cast<torch::optim::AdamW*>(optimizer.get()), nullptr);
  const auto gradient = at::randn({4, 3});
  parameters[0].mutable_grad() = gradient.clone();
  parameters[1].mutable_grad() = at::zeros({3});
  optimizer->step();
  const auto expected = before * (1 - 0.1 * 0.5) - 0.1 * gradient / (gradient.abs() + 1e-8);
  EXPECT_TRUE(at::allclose(parameters[0].detach(), expected, 1e-6, 1e-7));

  const auto adam_parameters = make_parameters();
  OptimizerOptions adam = options;
  adam.name = "adam";
  const auto l2 = build_optimizer(adam, adam_parameters);
  adam_parameters[0].mutable_grad() = gradient.clone();
  adam_parameters[1].mutable_grad() = at::zeros({3});
  l2->step();
  EXPECT_FALSE(at::allclose(adam_parameters[0].detach(), expected, 1e-4, 1e-5));
}

TEST(BuildOptimizer, SgdIsLibTorchSgdWithMomentum) {
  OptimizerOptions options;
  options.name = "sgd";
  options.lr = 0.1;
  options.momentum = 0.9;
  const auto ours = make_parameters();
  const auto optimizer = build_optimizer(options, ours);
  ASSERT_NE(dynamic_cast<torch::optim::SGD*>(optimizer.get()), nullptr);
  const auto theirs = copies_of(ours);
  torch::optim::SGD direct(theirs, torch::optim::SGDOptions(0.1).momentum(0.9));
  expect_same_trajectory(*optimizer, ours, direct, theirs, 3);
}

// Nesterov's momentum by hand (PyTorch's formulation, which MLPerf's DeepSpeech2 trains with):
// v_t = mu v_{t-1} + g_t (v_1 = g_1), p_t = p_{t-1} - lr (g_t + mu v_t).
TEST(BuildOptimizer, SgdNesterovFollowsTheFormula) {
  OptimizerOptions options;
  options.name = "sgd";
  options.lr = 0.1;
  options.momentum = 0.9;
  options.nesterov = true;
  const auto parameters = make_parameters();
  const auto optimizer = build_optimizer(options, parameters);
  std::vector<at::Tensor> expected, velocity;
  for (const auto& p : parameters) expected.push_back(p.detach().clone());
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < parameters.size(); ++i) {
      const auto g = at::randn(parameters[i].sizes());
      parameters[i].mutable_grad() = g.clone();
      if (velocity.size() <= i)
        velocity.push_back(g.clone());
      else
        velocity[i] = 0.9 * velocity[i] + g;
      expected[i] -= 0.1 * (g + 0.9 * velocity[i]);
    }
    optimizer->step();
  }
  for (size_t i = 0; i < parameters.size(); ++i)
    EXPECT_TRUE(at::allclose(parameters[i].detach(), expected[i], 1e-6, 1e-6)) << "parameter " << i;
  options.momentum = 0;
  EXPECT_THROW(build_optimizer(options, make_parameters()), Error);
}

TEST(BuildOptimizer, LambGetsTheOptions) {
  OptimizerOptions options;
  options.name = "lamb";
  options.lr = 0.01;
  options.betas = {0.8, 0.99};
  options.eps = 1e-6;
  options.weight_decay = 0.1;
  const auto optimizer = build_optimizer(options, make_parameters());
  const auto* lamb = dynamic_cast<Lamb*>(optimizer.get());
  ASSERT_NE(lamb, nullptr);
  const auto& built = static_cast<const LambOptions&>(lamb->param_groups()[0].options());
  EXPECT_EQ(built.lr(), 0.01);
  EXPECT_EQ(built.betas(), std::make_tuple(0.8, 0.99));
  EXPECT_EQ(built.eps(), 1e-6);
  EXPECT_EQ(built.weight_decay(), 0.1);
}

// Parameter groups with learning-rate scales (ULMFiT's discriminative fine-tuning): each group
// follows plain Adam at its own rate lr * scale, set through set_learning_rate.
TEST(BuildOptimizer, GroupsLearnAtTheirShareOfTheRate) {
  OptimizerOptions options;
  options.name = "adam";
  const auto ours = make_parameters();
  auto optimizer = build_optimizer(options, std::vector<ParameterGroup>{{{ours[0]}, 1.0}, {{ours[1]}, 0.25}});
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  set_learning_rate(*optimizer, 0.01, {1.0, 0.25});
  const auto theirs = copies_of(ours);
  torch::optim::Adam head({theirs[0]}, torch::optim::AdamOptions(0.01));
  torch::optim::Adam body({theirs[1]}, torch::optim::AdamOptions(0.0025));
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < ours.size(); ++i) {
      const auto gradient = at::randn(ours[i].sizes());
      ours[i].mutable_grad() = gradient.clone();
      theirs[i].mutable_grad() = gradient.clone();
    }
    optimizer->step();
    head.step();
    body.step();
  }
  for (size_t i = 0; i < ours.size(); ++i) EXPECT_TRUE(at::allclose(ours[i], theirs[i], 1e-6, 1e-7)) << i;
  EXPECT_THROW(build_optimizer(options, std::vector<ParameterGroup>{{{ours[0]}, 0.0}}), Error);
}

TEST(BuildOptimizer, UnknownNamesAndBadOptionsAreErrors) {
  OptimizerOptions options;
  options.name = "adagrad";
  try {
    build_optimizer(options, make_parameters());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown optimizer 'adagrad'; known: adam, adamw, lamb, nag, novograd, sgd");
  }
  options.name = "adam";
  options.betas = {0.9};
  EXPECT_THROW(build_optimizer(options, make_parameters()), Error);
  options.betas = {0.9, 1.0};
  EXPECT_THROW(build_optimizer(options, make_parameters()), Error);
  options.betas = {0.9, 0.999};
  options.lr = -1;
  EXPECT_THROW(build_optimizer(options, make_parameters()), Error);
}

}  // namespace
}  // namespace mixseq
