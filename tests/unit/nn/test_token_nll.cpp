// token_nll: the per-token NLL and its gradient against LibTorch's log_softmax + gather, in fp64,
// fp32 and bf16, with <pad> targets and an upstream gradient that differs by row.
#include "mixseq/nn/token_nll.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "mixseq/text/vocabulary.h"

namespace mixseq {
namespace {

struct DtypeCase {
  at::ScalarType dtype;
  double tolerance;
};

TEST(TokenNll, EqualsLogSoftmaxAndGatherWithTheirGradients) {
  for (const auto [dtype, tolerance] : {DtypeCase{at::kDouble, 1e-10}, DtypeCase{at::kFloat, 1e-5}, DtypeCase{at::kBFloat16, 1e-2}}) {
    torch::manual_seed(4);
    const int64_t N = 7, V = 1003;  // V not a multiple of the SIMD width
    const auto logits = (at::randn({N, V}) * 4).to(dtype).requires_grad_(true);
    auto targets = at::randint(kSpecialSymbolCount, V, {N}, at::kLong);
    targets[2] = kPadId;
    const auto upstream = at::rand({N}, at::kDouble) + 0.5;  // a different weight per row

    const auto nll = token_nll(logits, targets);
    const auto arithmetic = dtype == at::kDouble ? at::kDouble : at::kFloat;
    EXPECT_EQ(nll.scalar_type(), arithmetic);
    (nll * upstream.to(arithmetic)).sum().backward();

    // The same from LibTorch's ops, in fp64 on the same (rounded) logits.
    const auto reference_logits = logits.detach().to(at::kDouble).requires_grad_(true);
    auto expected = -at::log_softmax(reference_logits, -1).gather(1, targets.unsqueeze(1)).squeeze(1);
    expected = expected.masked_fill(targets == kPadId, 0.0);
    (expected * upstream).sum().backward();

    EXPECT_TRUE(at::allclose(nll.to(at::kDouble), expected.detach(), tolerance, tolerance)) << dtype;
    EXPECT_EQ(nll[2].item<double>(), 0.0);
    ASSERT_EQ(logits.grad().scalar_type(), dtype);
    EXPECT_TRUE(at::allclose(logits.grad().to(at::kDouble), reference_logits.grad(), tolerance, tolerance)) << dtype;
    EXPECT_EQ(logits.grad()[2].abs().max().item<double>(), 0.0);  // <pad>: no gradient
  }
}

// With a bias: the softmax of logits + bias, and the bias's gradient summed over the rows, also
// for bf16 logits with an fp32 bias (added in fp32).
TEST(TokenNll, AddsTheBiasAndSumsItsGradient) {
  for (const auto [dtype, tolerance] : {DtypeCase{at::kDouble, 1e-10}, DtypeCase{at::kFloat, 1e-5}, DtypeCase{at::kBFloat16, 1e-2}}) {
    torch::manual_seed(6);
    const int64_t N = 300, V = 517;  // rows enough for several parallel tasks
    const auto logits = (at::randn({N, V}) * 3).to(dtype).requires_grad_(true);
    const auto bias_dtype = dtype == at::kDouble ? at::kDouble : at::kFloat;
    const auto bias = at::randn({V}, bias_dtype).requires_grad_(true);
    auto targets = at::randint(kSpecialSymbolCount, V, {N}, at::kLong);
    targets.narrow(0, 10, 5).fill_(kPadId);
    const auto upstream = at::rand({N}, at::kDouble) + 0.5;
    const auto nll = token_nll(logits, targets, bias);
    (nll * upstream.to(nll.scalar_type())).sum().backward();

    const auto reference_logits = logits.detach().to(at::kDouble).requires_grad_(true);
    const auto reference_bias = bias.detach().to(at::kDouble).requires_grad_(true);
    auto expected = -at::log_softmax(reference_logits + reference_bias, -1).gather(1, targets.unsqueeze(1)).squeeze(1);
    expected = expected.masked_fill(targets == kPadId, 0.0);
    (expected * upstream).sum().backward();

    EXPECT_TRUE(at::allclose(nll.to(at::kDouble), expected.detach(), tolerance, tolerance)) << dtype;
    EXPECT_TRUE(at::allclose(logits.grad().to(at::kDouble), reference_logits.grad(), tolerance, tolerance)) << dtype;
    ASSERT_EQ(bias.grad().scalar_type(), bias_dtype);
    // A sum over 285 rows of gradients rounded to bf16 in the reference only: a looser bound.
    const double bias_tolerance = dtype == at::kBFloat16 ? 1e-4 : tolerance;
    EXPECT_TRUE(at::allclose(bias.grad().to(at::kDouble), reference_bias.grad(), bias_tolerance, bias_tolerance))
        << dtype << " " << (bias.grad().to(at::kDouble) - reference_bias.grad()).abs().max();
  }
}

// ignore_index: the default skips <pad> (0); another index skips that one instead; a negative
// one skips nothing, so column 0 is scored as any other (an adaptive softmax's tail clusters,
// whose word 0 is a real word).
TEST(TokenNll, IgnoresTheGivenIndexOrNone) {
  torch::manual_seed(9);
  const auto logits = at::randn({4, 6}).requires_grad_(true);
  const auto targets = at::tensor(std::vector<int64_t>{0, 3, 0, 5});
  const auto full = -at::log_softmax(logits.detach(), -1).gather(1, targets.unsqueeze(1)).squeeze(1);  // [4]
  const auto pad_rows = targets == kPadId;
  EXPECT_TRUE(at::allclose(token_nll(logits, targets), full.masked_fill(pad_rows, 0.0), 1e-6, 1e-6));
  EXPECT_TRUE(at::allclose(token_nll(logits, targets, {}, 3), full.masked_fill(targets == 3, 0.0), 1e-6, 1e-6));
  const auto all = token_nll(logits, targets, {}, /*ignore_index=*/-1);
  EXPECT_TRUE(at::allclose(all, full, 1e-6, 1e-6));
  EXPECT_GT(all[0].item<float>(), 0.0f);
  // The gradient of a row with target 0 is p - onehot(0), not zero, when nothing is ignored.
  all.sum().backward();
  auto expected_grad = at::softmax(logits.detach(), -1);
  expected_grad.scatter_add_(1, targets.unsqueeze(1), -at::ones({4, 1}));
  EXPECT_TRUE(at::allclose(logits.grad(), expected_grad, 1e-5, 1e-6));
  // LibTorch's path (off the CPU, and for empty inputs) takes the same index.
  EXPECT_EQ(token_nll(at::empty({0, 6}), at::empty({0}, at::kLong), {}, -1).numel(), 0);
}

TEST(TokenNll, RefusesTargetsOutsideTheVocabulary) {
  const auto logits = at::randn({2, 5});
  EXPECT_THROW(token_nll(logits, at::tensor({1, 5}, at::kLong)), std::exception);
  EXPECT_THROW(token_nll(logits, at::tensor({1, 2, 3}, at::kLong)), std::exception);
}

}  // namespace
}  // namespace mixseq
