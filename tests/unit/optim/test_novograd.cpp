#include "mixseq/optim/novograd.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/serialize.h>

#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "mixseq/optim/optimizer.h"
#include "mixseq/util/error.h"
#include "test_support.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

// tests/data/novograd/golden.json: five steps of the reference's own Novograd class
// (DeepLearningExamples Jasper common/optimizers.py; make_golden.py beside it says how).
const nlohmann::json& golden() {
  static const nlohmann::json json =
      nlohmann::json::parse(test::read_file(MIXSEQ_TEST_DATA_DIR "/novograd/golden.json"));
  return json;
}

const std::vector<std::string> kNames = {"w", "b", "c"};  // the golden file's parameters, in optimizer order

at::Tensor golden_tensor(const nlohmann::json& values, const std::string& name) {
  const auto shape = golden()["shapes"][name].get<std::vector<int64_t>>();
  return at::tensor(values.get<std::vector<double>>(), at::kDouble).to(at::kFloat).view(shape);
}

NovogradOptions options_of(const nlohmann::json& c) {
  const auto betas = c["betas"].get<std::vector<double>>();
  return NovogradOptions(c["lr"].get<double>())
      .betas({betas[0], betas[1]})
      .eps(c["eps"].get<double>())
      .weight_decay(c["weight_decay"].get<double>())
      .grad_averaging(c["grad_averaging"].get<bool>())
      .amsgrad(c["amsgrad"].get<bool>());
}

// The golden parameters, fresh (requiring grad) from the file's initial values.
std::vector<at::Tensor> initial_parameters() {
  std::vector<at::Tensor> parameters;
  for (const auto& name : kNames) parameters.push_back(golden_tensor(golden()["initial"][name], name).requires_grad_());
  return parameters;
}

// Sets the file's gradients of `step` (0-based); a null gradient leaves the parameter without one.
void set_golden_gradients(std::vector<at::Tensor>& parameters, size_t step) {
  const auto& grads = golden()["grads"][step];
  for (size_t i = 0; i < kNames.size(); ++i) {
    const auto& g = grads[kNames[i]];
    parameters[i].mutable_grad() = g.is_null() ? at::Tensor() : golden_tensor(g, kNames[i]);
  }
}

TEST(Novograd, FiveStepsMatchTheReferenceForEveryOptionSet) {
  const auto& cases = golden()["cases"];
  ASSERT_EQ(cases.size(), 5u);
  double worst = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    auto parameters = initial_parameters();
    Novograd novograd(parameters, options_of(c));
    const auto& after = c["after"];
    ASSERT_EQ(after.size(), golden()["grads"].size());
    for (size_t step = 0; step < after.size(); ++step) {
      set_golden_gradients(parameters, step);
      novograd.step();
      for (size_t i = 0; i < kNames.size(); ++i) {
        const auto expected = golden_tensor(after[step][kNames[i]], kNames[i]);
        const double gap = (parameters[i].detach() - expected).abs().max().item<double>();
        worst = std::max(worst, gap);
        EXPECT_LE(gap, 1e-6) << "step " << step + 1 << ", parameter " << kNames[i] << ":\n"
                             << parameters[i] << "\nexpected\n"
                             << expected;
      }
    }
  }
  std::cout << "largest gap to the reference over 5 cases x 5 steps: " << worst << "\n";
}

TEST(Novograd, OneStepMatchesHandComputation) {
  // w = (3, 4), g = (1, -2): v = ||g||² = 5 (the first step copies it), u = g / √5,
  // m = u (β1·0 + u), w = w - 0.1·u. b = (1), g = (0.5), weight decay 0.1, grad averaging with β1 0.9:
  // v = 0.25, u = (0.5 / 0.5 + 0.1·1)·(1 - 0.9) = 0.11, b = 1 - 0.1·0.11 = 0.989.
  auto w = at::tensor({3.0, 4.0}, at::kDouble).requires_grad_();
  w.mutable_grad() = at::tensor({1.0, -2.0}, at::kDouble);
  Novograd plain({w}, NovogradOptions(0.1).eps(0.0));
  plain.step();
  EXPECT_TRUE(w.allclose(at::tensor({3.0 - 0.1 / std::sqrt(5.0), 4.0 + 0.2 / std::sqrt(5.0)}, at::kDouble), 0, 1e-12))
      << w;

  auto b = at::tensor({1.0}, at::kDouble).requires_grad_();
  b.mutable_grad() = at::tensor({0.5}, at::kDouble);
  Novograd averaged({b}, NovogradOptions(0.1).betas({0.9, 0.0}).eps(0.0).weight_decay(0.1).grad_averaging(true));
  averaged.step();
  EXPECT_NEAR(b.item<double>(), 0.989, 1e-12);
}

TEST(Novograd, KeepsOneSecondMomentPerTensorAndLeavesGradientsAlone) {
  auto parameters = initial_parameters();
  Novograd novograd(parameters, NovogradOptions(0.01).amsgrad(true));
  set_golden_gradients(parameters, 1);
  const auto gradient = parameters[0].grad().clone();
  novograd.step();
  EXPECT_TRUE(parameters[0].grad().equal(gradient));  // the reference divides p.grad in place; we do not
  ASSERT_EQ(novograd.state().size(), 3u);
  for (const auto& entry : novograd.state()) {
    const auto& state = static_cast<const NovogradParamState&>(*entry.second);
    EXPECT_EQ(state.exp_avg_sq().dim(), 0);
    EXPECT_EQ(state.max_exp_avg_sq().dim(), 0);
    EXPECT_TRUE(state.max_exp_avg_sq().equal(state.exp_avg_sq()));
  }
  // β2 = 0 (Jasper's default): v is the latest ||g||² of each tensor.
  set_golden_gradients(parameters, 2);
  novograd.step();
  const auto& w_state = static_cast<const NovogradParamState&>(
      *novograd.state().at(compat::optimizer_state_key(novograd.state(), parameters[0])));
  EXPECT_TRUE(w_state.exp_avg_sq().equal(parameters[0].grad().pow(2).sum()));
}

// Steps 1-2 in one optimizer, then a save; steps 3-5 in that optimizer and in a fresh one that loaded
// the save, over parameters with the same values (as after loading a checkpoint): they must agree
// bit for bit. Both with and without amsgrad (whose v̂ is saved only when it exists).
TEST(Novograd, SaveAndLoadContinueIdentically) {
  for (const bool amsgrad : {false, true}) {
    SCOPED_TRACE(amsgrad ? "amsgrad" : "plain");
    const auto options = NovogradOptions(0.05).betas({0.9, 0.5}).weight_decay(1e-3).amsgrad(amsgrad);
    test::TempDir dir;
    auto original = initial_parameters();
    Novograd saved(original, options);
    for (size_t step = 0; step < 2; ++step) {
      set_golden_gradients(original, step);
      saved.step();
    }
    torch::save(saved, dir.path("novograd.pt"));

    auto resumed = initial_parameters();
    for (size_t i = 0; i < resumed.size(); ++i) resumed[i].detach().copy_(original[i].detach());
    Novograd loaded(resumed, options);
    EXPECT_EQ(loaded.state().size(), 0u);
    torch::load(loaded, dir.path("novograd.pt"));
    ASSERT_EQ(loaded.state().size(), 3u);

    for (size_t step = 2; step < 5; ++step) {
      set_golden_gradients(original, step);
      set_golden_gradients(resumed, step);
      saved.step();
      loaded.step();
    }
    for (size_t i = 0; i < original.size(); ++i) EXPECT_TRUE(resumed[i].equal(original[i])) << kNames[i];
  }
}

TEST(Novograd, AmsgradSwitchedOnAtResumeStartsItsMaximumFromTheCurrentMoment) {
  test::TempDir dir;
  auto parameters = initial_parameters();
  Novograd plain(parameters, NovogradOptions(0.01).betas({0.9, 0.5}));
  set_golden_gradients(parameters, 0);
  plain.step();
  torch::save(plain, dir.path("novograd.pt"));

  Novograd amsgrad(parameters, NovogradOptions(0.01).betas({0.9, 0.5}).amsgrad(true));
  torch::load(amsgrad, dir.path("novograd.pt"));
  set_golden_gradients(parameters, 1);
  amsgrad.step();
  const auto& w_state = static_cast<const NovogradParamState&>(
      *amsgrad.state().at(compat::optimizer_state_key(amsgrad.state(), parameters[0])));
  EXPECT_TRUE(w_state.max_exp_avg_sq().equal(w_state.exp_avg_sq()));
}

TEST(Novograd, RejectsBadOptions) {
  const auto p = at::zeros({2}).requires_grad_();
  EXPECT_THROW(Novograd({p}, NovogradOptions(-1.0)), Error);
  EXPECT_THROW(Novograd({p}, NovogradOptions(0.1).betas({0.95, 1.0})), Error);
  EXPECT_THROW(Novograd({p}, NovogradOptions(0.1).eps(-1e-8)), Error);
}

TEST(BuildOptimizer, NovogradGetsTheOptionsAndFollowsTheReference) {
  OptimizerOptions options;
  options.name = "novograd";
  options.lr = 1e-2;
  options.betas = {0.95, 0.0};
  options.weight_decay = 1e-3;
  options.grad_averaging = true;
  options.amsgrad = true;
  auto parameters = initial_parameters();
  const auto optimizer = build_optimizer(options, parameters);
  const auto* novograd = dynamic_cast<Novograd*>(optimizer.get());
  ASSERT_NE(novograd, nullptr);
  const auto& built = static_cast<const NovogradOptions&>(novograd->param_groups()[0].options());
  EXPECT_EQ(built.lr(), 1e-2);
  EXPECT_EQ(built.betas(), std::make_tuple(0.95, 0.0));
  EXPECT_EQ(built.eps(), 1e-8);
  EXPECT_EQ(built.weight_decay(), 1e-3);
  EXPECT_TRUE(built.grad_averaging());
  EXPECT_TRUE(built.amsgrad());
}

TEST(BuildOptimizer, NovogradFlagsAreErrorsForOtherOptimizers) {
  OptimizerOptions options;
  options.amsgrad = true;
  try {
    build_optimizer(options, initial_parameters());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "optim.grad_averaging and optim.amsgrad are novograd's; optim.name is 'adam': remove them, or set "
                 "optim.name novograd");
  }
}

}  // namespace
}  // namespace mixseq
