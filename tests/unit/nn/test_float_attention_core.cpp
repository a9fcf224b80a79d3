// nn/float_attention_core.h against the plain kernel of nn/scaled_dot_product_attention.h (ATen's
// products, masked_fill and softmax, and autograd's gradients of them).
#include "mixseq/nn/float_attention_core.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mixseq/nn/scaled_dot_product_attention.h"
#include "thread_count.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

struct CoreCase {
  int64_t batch, heads, t, s, head_width;
  bool causal, padded;
  double dropout;
};

std::string name_of(const CoreCase& c) {
  return "B=" + std::to_string(c.batch) + " H=" + std::to_string(c.heads) + " T=" + std::to_string(c.t) +
         " S=" + std::to_string(c.s) + " Dh=" + std::to_string(c.head_width) + " causal=" + std::to_string(c.causal) +
         " padded=" + std::to_string(c.padded) + " dropout=" + std::to_string(c.dropout);
}

// [B, H, rows, Dh] as a projection leaves it: a view of [B, rows, H Dh].
torch::Tensor heads_of(const torch::Tensor& projected, int64_t heads) {
  return projected.view({projected.size(0), projected.size(1), heads, -1}).transpose(1, 2);
}

// Outputs and q, k, v gradients of `kernel` for the case's inputs (the same for both kernels: the
// generator is seeded before the inputs and again before the dropout draws).
std::vector<torch::Tensor> run(const CoreCase& c, AttentionKernel kernel, bool projected_layout) {
  at::manual_seed(21);
  auto q_in = at::randn({c.batch, c.t, c.heads * c.head_width}).requires_grad_();
  auto k_in = at::randn({c.batch, c.s, c.heads * c.head_width}).requires_grad_();
  auto v_in = at::randn({c.batch, c.s, c.heads * c.head_width}).requires_grad_();
  const auto weighting = at::randn({c.batch, c.heads, c.t, c.head_width});
  auto pad = at::zeros({c.batch, c.s}, at::kBool);
  if (c.padded) pad[0].slice(0, c.s - 2).fill_(true);  // batch row 0: the last 2 keys are padding
  auto q = heads_of(q_in, c.heads), k = heads_of(k_in, c.heads), v = heads_of(v_in, c.heads);
  if (!projected_layout) q = q.contiguous(), k = k.contiguous(), v = v.contiguous();
  if (kernel == AttentionKernel::kAuto) {
    EXPECT_TRUE(takes_float_attention_core(q, k, v)) << name_of(c);
  }
  at::manual_seed(22);
  const auto out = scaled_dot_product_attention(q, k, v, c.padded ? pad : torch::Tensor(), c.causal, c.dropout,
                                                kernel);  // [B, H, T, Dh]
  (out * weighting).sum().backward();
  return {out.detach(), q_in.grad(), k_in.grad(), v_in.grad()};
}

void expect_core_equals_plain(const CoreCase& c, bool projected_layout) {
  const auto core = run(c, AttentionKernel::kAuto, projected_layout);
  const auto plain = run(c, AttentionKernel::kPlain, projected_layout);
  const char* what[] = {"output", "q's gradient", "k's gradient", "v's gradient"};
  for (size_t i = 0; i < core.size(); ++i) {
    ASSERT_TRUE(core[i].defined() && plain[i].defined()) << name_of(c) << " " << what[i];
    EXPECT_TRUE(at::allclose(core[i], plain[i], 2e-5, 2e-6))
        << name_of(c) << " layout " << projected_layout << ": " << what[i] << " differs by up to "
        << (core[i] - plain[i]).abs().max().item<double>();
  }
  EXPECT_FALSE(core[0].isnan().any().item<bool>()) << name_of(c);
}

bool core_available() {
  const auto x = at::zeros({1, 1, 2, 4});
  return takes_float_attention_core(x, x, x);
}

// The Transformer's attentions: encoder self-attention over padded keys, the decoder's causal
// self-attention, cross-attention with more keys than queries; rows of 37 keys leave tails after
// the softmax's 16-lane loops; one query (T = 1); dropout on the weights, with the same draws.
const CoreCase kCases[] = {
    {3, 2, 5, 5, 8, false, true, 0.0},  {3, 2, 5, 5, 8, true, false, 0.0},   {2, 4, 4, 7, 16, false, true, 0.0},
    {2, 3, 37, 37, 8, true, true, 0.0}, {2, 2, 1, 6, 8, false, true, 0.0},   {3, 2, 6, 6, 8, true, true, 0.3},
    {2, 2, 4, 9, 4, false, false, 0.5},
};

TEST(FloatAttentionCore, EqualsThePlainKernelWithGradients) {
  if (!core_available()) {
#ifdef MIXSEQ_TESTS_EXPECT_CBLAS
    FAIL() << "mixseq was built with a CBLAS, but float_attention_core does not take fp32 CPU operands";
#else
    GTEST_SKIP() << "mixseq was built without a CBLAS: the plain kernel runs instead";
#endif
  }
  for (const auto& c : kCases) {
    expect_core_equals_plain(c, /*projected_layout=*/true);
    expect_core_equals_plain(c, /*projected_layout=*/false);
  }
}

TEST(FloatAttentionCore, SameOnOneThreadAndOnSeveral) {
  if (!core_available()) GTEST_SKIP() << "no float_attention_core in this build";
  const CoreCase c{4, 3, 7, 9, 8, true, true, 0.2};
  std::vector<torch::Tensor> one, several;
  {
    test::ThreadCount threads(1);
    one = run(c, AttentionKernel::kAuto, true);
  }
  {
    test::ThreadCount threads(2);
    several = run(c, AttentionKernel::kAuto, true);
  }
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(at::equal(one[i], several[i])) << i;
}

// The context comes back stored as [B, T, H, Dh], so that merging the heads is a view.
TEST(FloatAttentionCore, OutputMergesHeadsWithoutACopy) {
  if (!core_available()) GTEST_SKIP() << "no float_attention_core in this build";
  const auto q = heads_of(at::randn({2, 5, 12}), 3), k = heads_of(at::randn({2, 6, 12}), 3);
  const auto out = float_attention_core(q, k, k, torch::Tensor(), 0.0);
  ASSERT_EQ(out.sizes(), (at::IntArrayRef{2, 3, 5, 4}));
  EXPECT_TRUE(out.transpose(1, 2).is_contiguous());
}

TEST(FloatAttentionCore, LeavesOtherOperandsToThePlainKernel) {
  const auto x = at::randn({1, 2, 3, 4});
  EXPECT_FALSE(takes_float_attention_core(x.to(at::kDouble), x.to(at::kDouble), x.to(at::kDouble)));
  EXPECT_FALSE(takes_float_attention_core(x.to(at::kBFloat16), x.to(at::kBFloat16), x.to(at::kBFloat16)));
  EXPECT_FALSE(takes_float_attention_core(x.transpose(2, 3), x, x));  // Dh not innermost
  if (!core_available()) return;
  compat::set_autocast(c10::kCPU, true, at::kBFloat16);
  EXPECT_FALSE(takes_float_attention_core(x, x, x));
  compat::set_autocast(c10::kCPU, false, at::kBFloat16);
}

}  // namespace
}  // namespace mixseq
