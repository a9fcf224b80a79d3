#include "mixseq/optim/nag.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/serialize.h>

#include <sstream>

#include "mixseq/optim/optimizer.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// fairseq's NAG by hand on one weight p = 1 with a constant gradient 2, momentum 0.5, weight
// decay 0.1; the learning rate goes 0.1, 0.05, 0.1 (c = lr / lr_old = 1, 0.5, 2):
//   step 1: p = 1 * 0.99 + 0 - 1.5 * 0.1 * 2                         = 0.69,      b = -0.2
//   step 2: p = 0.69 * 0.995 + 0.25 * 0.5 * -0.2 - 1.5 * 0.05 * 2    = 0.51155,   b = 0.25 * -0.2 - 0.1 = -0.15
//   step 3: p = 0.51155 * 0.99 + 0.25 * 2 * -0.15 - 1.5 * 0.1 * 2    = 0.1314345, b = 0.5 * 2 * -0.15 - 0.2 = -0.35
TEST(Nag, StepsAsFairseqsNag) {
  auto p = at::ones({1}, at::kDouble).requires_grad_();
  Nag nag({p}, NagOptions(0.1).momentum(0.5).weight_decay(0.1));
  p.mutable_grad() = at::full({1}, 2.0, at::kDouble);
  nag.step();
  EXPECT_NEAR(p.item<double>(), 0.69, 1e-12);
  static_cast<NagOptions&>(nag.param_groups()[0].options()).lr(0.05);
  nag.step();
  EXPECT_NEAR(p.item<double>(), 0.51155, 1e-12);

  // The state and lr_old travel through a checkpoint: a reloaded optimizer takes the same third step.
  std::stringstream stream;
  {
    torch::serialize::OutputArchive archive;
    nag.save(archive);
    archive.save_to(stream);
  }
  auto q = p.detach().clone().requires_grad_();
  Nag reloaded({q}, NagOptions(0.1).momentum(0.5).weight_decay(0.1));
  {
    torch::serialize::InputArchive archive;
    archive.load_from(stream);
    reloaded.load(archive);
  }
  for (auto* optimizer : {&nag, &reloaded}) static_cast<NagOptions&>(optimizer->param_groups()[0].options()).lr(0.1);
  q.mutable_grad() = at::full({1}, 2.0, at::kDouble);
  nag.step();
  reloaded.step();
  EXPECT_NEAR(p.item<double>(), 0.1314345, 1e-12);
  EXPECT_NEAR(q.item<double>(), 0.1314345, 1e-12);
}

// fp32 CPU parameters take one pass over p, b and g; the same steps as the statements above
// computed op by op in double (the learning rate changing, weight decay on and off, a size that
// is not a multiple of the vector width, several threads' chunks), to fp32 rounding.
TEST(Nag, Fp32StepsInOnePassEqualTheStatementsToRounding) {
  at::manual_seed(3);
  for (const double weight_decay : {0.0, 0.01}) {
    const auto start = at::randn({70001});
    auto p = start.clone().requires_grad_();
    Nag nag({p}, NagOptions(0.25).momentum(0.99).weight_decay(weight_decay));
    auto expected = start.to(at::kDouble);
    auto buffer = at::zeros_like(expected);
    double lr_old = -1;
    for (const double lr : {0.25, 0.25, 0.1, 0.3}) {
      const auto g = at::randn({70001});
      p.mutable_grad() = g;
      static_cast<NagOptions&>(nag.param_groups()[0].options()).lr(lr);
      nag.step();
      const double c = lr_old < 0 ? 1.0 : lr / lr_old;
      const auto gd = g.to(at::kDouble);
      expected = expected * (1.0 - lr * weight_decay) + 0.99 * 0.99 * c * buffer - 1.99 * lr * gd;
      buffer = 0.99 * c * buffer - lr * gd;
      lr_old = lr;
      EXPECT_TRUE(at::allclose(p.detach().to(at::kDouble), expected, 1e-5, 1e-5))
          << "lr " << lr << " weight decay " << weight_decay << ": "
          << (p.detach().to(at::kDouble) - expected).abs().max().item<double>();
    }
  }
}

// The one-pass step moves the weights' version counters as the statements' in-place ops do.
TEST(Nag, AStepMovesEachWeightsVersionCounter) {
  auto w = at::randn({300}).requires_grad_();
  Nag nag({w}, NagOptions(0.25));
  w.mutable_grad() = at::randn({300});
  const auto before = w._version();
  nag.step();
  EXPECT_GT(w._version(), before);
}

TEST(Nag, BuiltByNameWithTheMomentumOption) {
  auto p = at::ones({2}).requires_grad_();
  OptimizerOptions options;
  options.name = "nag";
  options.lr = 0.25;
  options.momentum = 0.99;
  auto optimizer = build_optimizer(options, {p});
  const auto& built = static_cast<const NagOptions&>(optimizer->param_groups()[0].options());
  EXPECT_EQ(built.momentum(), 0.99);
  EXPECT_EQ(built.lr(), 0.25);
  options.momentum = 1.0;
  EXPECT_THROW(build_optimizer(options, {p}), Error);
}

}  // namespace
}  // namespace mixseq
