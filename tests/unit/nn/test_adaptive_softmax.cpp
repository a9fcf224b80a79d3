// Adaptive input and adaptive softmax (Transformer-XL's AdaptiveEmbedding and
// ProjectedAdaptiveLogSoftmax): lookups per cluster, log-probabilities that sum to 1, the NLL equal
// to the log-probabilities at the targets, one cluster equal to a full softmax, the reference's
// head columns for the tail clusters, and tied tensors that are one tensor with one gradient.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradient_check.h"
#include "mixseq/nn/adaptive_embedding.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/nn/projected_adaptive_log_softmax.h"
#include "mixseq/text/vocabulary.h"
#include "test_support.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

using test::error_of;

constexpr int64_t kVocab = 20, kWidth = 6;

AdaptiveClusters clusters(std::vector<int64_t> cutoffs, int64_t div_val, int64_t embed_dim = 8) {
  AdaptiveClusters c;
  c.vocab_size = kVocab;
  c.embed_dim = embed_dim;
  c.proj_dim = kWidth;
  c.cutoffs = std::move(cutoffs);
  c.div_val = div_val;
  return c;
}

ProjectedAdaptiveLogSoftmax make_softmax(const AdaptiveClusters& c, bool tie_weight = false, bool tie_projs = false,
                                         AdaptiveEmbedding embedding = nullptr) {
  ProjectedAdaptiveLogSoftmaxOptions options;
  options.clusters = c;
  options.tie_weight = tie_weight;
  options.tie_projs = tie_projs;
  ProjectedAdaptiveLogSoftmax softmax(options, std::move(embedding));
  torch::NoGradGuard no_grad;
  for (auto& p : softmax->parameters()) p.normal_(0.0, 0.5);  // biases and clusters away from 0
  return softmax;
}

// The splits the tests run over: full softmax with and without a projection, one matrix with
// cutoffs, one matrix per cluster.
struct Split {
  std::vector<int64_t> cutoffs;
  int64_t div_val;
  int64_t embed_dim;
};
const std::vector<Split> kSplits = {{{}, 1, kWidth}, {{}, 1, 8}, {{5, 12}, 1, kWidth}, {{5, 12}, 1, 8},
                                    {{5, 12}, 2, 8}, {{3}, 2, kWidth}};

TEST(AdaptiveClusters, SplitsTheVocabularyAsTheReference) {
  const auto c = clusters({5, 12}, 2, 8);
  EXPECT_EQ(c.count(), 3);
  EXPECT_EQ((std::vector<int64_t>{c.begin(0), c.end(0), c.begin(1), c.end(1), c.begin(2), c.end(2)}),
            (std::vector<int64_t>{0, 5, 5, 12, 12, 20}));
  EXPECT_EQ((std::vector<int64_t>{c.dim(0), c.dim(1), c.dim(2)}), (std::vector<int64_t>{8, 4, 2}));
  EXPECT_EQ(c.matrix_count(), 3);
  EXPECT_TRUE(c.projected());
  EXPECT_FALSE(clusters({5}, 1, kWidth).projected());
  EXPECT_EQ(error_of([] { clusters({5, 5}, 1).check("model.transformer_xl"); }),
            "model.transformer_xl.cutoffs must increase strictly between 0 and the vocabulary size 20 (exclusive), "
            "got 5 after 5");
  EXPECT_EQ(error_of([] { clusters({5, 20}, 1).check("m"); }),
            "m.cutoffs must increase strictly between 0 and the vocabulary size 20 (exclusive), got 20 after 5");
  EXPECT_EQ(error_of([] { clusters({5, 12}, 4, 8).check("m"); }),
            "m: with d_embed 8 and div_val 4 cluster 2 would have vectors of width 0; lower div_val or use fewer "
            "cutoffs");
}

TEST(AdaptiveEmbedding, LooksUpEachTokenInItsClusterThenProjectsAndScales) {
  at::manual_seed(1);
  for (const auto& split : kSplits) {
    const auto c = clusters(split.cutoffs, split.div_val, split.embed_dim);
    AdaptiveEmbedding embedding(c);
    const auto tokens = at::arange(kVocab, at::kLong).view({4, 5});
    const auto out = embedding(tokens);  // [4, 5, D]
    ASSERT_EQ(out.sizes(), (std::vector<int64_t>{4, 5, kWidth}));
    for (int64_t id = 0; id < kVocab; ++id) {
      int64_t cluster = 0;
      while (id >= c.end(cluster)) ++cluster;
      const int64_t matrix = c.matrix_count() == 1 ? 0 : cluster;
      const int64_t row = c.matrix_count() == 1 ? id : id - c.begin(cluster);
      auto expected = embedding->weight(matrix)[row];
      if (c.projected()) expected = at::mv(embedding->projection(matrix), expected);
      expected = expected * std::sqrt(static_cast<double>(kWidth));
      EXPECT_TRUE(at::allclose(out.view({kVocab, kWidth})[id], expected, 1e-5, 1e-6)) << "id " << id;
    }
  }
}

TEST(ProjectedAdaptiveLogSoftmax, LogProbsSumToOneAndTheNllIsMinusTheirValueAtTheTargets) {
  at::manual_seed(2);
  for (const auto& split : kSplits) {
    auto softmax = make_softmax(clusters(split.cutoffs, split.div_val, split.embed_dim));
    const auto hidden = at::randn({30, kWidth});
    const auto log_probs = softmax->log_probs(hidden);  // [N, V]
    ASSERT_EQ(log_probs.sizes(), (std::vector<int64_t>{30, kVocab}));
    EXPECT_EQ(log_probs.scalar_type(), at::kFloat);
    EXPECT_TRUE(at::allclose(log_probs.exp().sum(-1), at::ones({30}), 1e-5, 1e-5));
    auto targets = at::randint(kVocab, {30}, at::kLong);
    targets[3] = kPadId;  // padding: 0, as token_nll gives it
    // Each tail cluster's first word: its index in the tail is 0, the id of <pad>, and is scored.
    for (size_t i = 0; i < split.cutoffs.size(); ++i) targets[4 + static_cast<int64_t>(i)] = split.cutoffs[i];
    const auto expected = -log_probs.gather(1, targets.unsqueeze(1)).squeeze(1).masked_fill(targets == kPadId, 0.0);
    EXPECT_TRUE(at::allclose(softmax->nll(hidden, targets), expected, 1e-5, 1e-6)) << split.cutoffs.size();
    EXPECT_EQ(softmax->nll(hidden, targets)[3].item<float>(), 0.0f);
    for (size_t i = 0; i < split.cutoffs.size(); ++i)
      EXPECT_GT(softmax->nll(hidden, targets)[4 + static_cast<int64_t>(i)].item<float>(), 0.0f);
  }
}

// Under bf16 autocast (how Transformer-XL trains where bf16 is native) the logits are bf16 and
// token_nll widens them as it reads them: the NLL and the gradient of the hidden states stay
// within bf16's rounding of the fp32 ones, with tail clusters and without.
TEST(ProjectedAdaptiveLogSoftmax, UnderBf16AutocastTheNllFollowsTheFloatOne) {
  for (const auto& cutoffs : std::vector<std::vector<int64_t>>{{5, 12}, {}}) {
    at::manual_seed(7);
    auto softmax = make_softmax(clusters(cutoffs, 1, 8));
    const auto hidden = at::randn({40, kWidth}).requires_grad_();
    auto targets = at::randint(kVocab, {40}, at::kLong);
    for (size_t i = 0; i < cutoffs.size(); ++i) targets[static_cast<int64_t>(i)] = cutoffs[i];
    const auto expected = softmax->nll(hidden, targets);
    const auto expected_grad = torch::autograd::grad({expected.sum()}, {hidden})[0];
    compat::set_autocast(c10::kCPU, true, at::kBFloat16);
    const auto nll = softmax->nll(hidden, targets);
    const auto grad = torch::autograd::grad({nll.sum()}, {hidden})[0];
    compat::set_autocast(c10::kCPU, false, at::kBFloat16);
    at::autocast::clear_cache();
    EXPECT_EQ(nll.scalar_type(), at::kFloat);
    EXPECT_TRUE(at::allclose(nll, expected, 2e-2, 2e-2)) << (nll - expected).abs().max();
    EXPECT_TRUE(at::allclose(grad.to(at::kFloat), expected_grad, 5e-2, 5e-2)) << (grad - expected_grad).abs().max();
  }
}

// Without cutoffs: log_softmax(h P W^T + b), or without a projection log_softmax(h W^T + b).
TEST(ProjectedAdaptiveLogSoftmax, OneClusterIsAFullSoftmax) {
  at::manual_seed(3);
  for (const int64_t embed_dim : {kWidth, int64_t{8}}) {
    auto softmax = make_softmax(clusters({}, 1, embed_dim));
    const auto hidden = at::randn({7, kWidth});
    const auto& projection = softmax->projection(0);
    EXPECT_EQ(projection.defined(), embed_dim != kWidth);
    const auto projected = projection.defined() ? at::matmul(hidden, projection) : hidden;
    const auto expected = at::log_softmax(at::linear(projected, softmax->weight(0), softmax->bias(0)), -1);
    EXPECT_TRUE(at::allclose(softmax->log_probs(hidden), expected, 1e-5, 1e-6)) << embed_dim;
    const auto targets = at::tensor(std::vector<int64_t>{1, 5, kVocab - 1, 2, 9, 3, 4});
    EXPECT_TRUE(at::allclose(softmax->nll(hidden, targets), -expected.gather(1, targets.unsqueeze(1)).squeeze(1),
                             1e-5, 1e-6)) << embed_dim;
  }
}

// The reference scores tail cluster i by the head's column head_size - i (cluster 1 by the last
// column, cluster_weight's last row): log p(w) = head[:, S + C - i] + log_softmax(tail_i)[w - begin].
TEST(ProjectedAdaptiveLogSoftmax, TailClustersAreScoredByTheHeadColumnsFromTheEnd) {
  at::manual_seed(4);
  const auto c = clusters({5, 12}, 2, 8);
  auto softmax = make_softmax(c);
  const auto params = softmax->named_parameters();
  const auto hidden = at::randn({4, kWidth});
  const auto logits = [&](int64_t i, const torch::Tensor& weight, const torch::Tensor& bias) {
    return at::linear(at::matmul(hidden, params["projection_" + std::to_string(i)]), weight, bias);
  };
  const auto head = at::log_softmax(logits(0, at::cat({params["weight_0"], params["cluster_weight"]}),
                                           at::cat({params["bias_0"], params["cluster_bias"]})),
                                    -1);  // [N, 5 + 2]
  const auto tail1 = at::log_softmax(logits(1, params["weight_1"], params["bias_1"]), -1);  // [N, 7]
  const auto tail2 = at::log_softmax(logits(2, params["weight_2"], params["bias_2"]), -1);  // [N, 8]
  const auto expected = at::cat({head.slice(1, 0, 5), head.slice(1, 6, 7) + tail1, head.slice(1, 5, 6) + tail2}, 1);
  EXPECT_TRUE(at::allclose(softmax->log_probs(hidden), expected, 1e-5, 1e-6));
}

// With tail clusters, and with one cluster (token_nll's path, a projection included).
TEST(ProjectedAdaptiveLogSoftmax, GradientsMatchFiniteDifferences) {
  for (const auto& cutoffs : std::vector<std::vector<int64_t>>{{5, 12}, {}}) {
    at::manual_seed(5);
    auto softmax = make_softmax(clusters(cutoffs, cutoffs.empty() ? 1 : 2, 8));
    softmax->to(at::kDouble);
    const auto hidden = at::randn({6, kWidth}, at::kDouble).requires_grad_();
    // Every cluster, both ends (kPadId, 0, is padding: its NLL is 0).
    const auto targets = at::tensor(std::vector<int64_t>{1, 4, 5, 11, 12, 19});
    std::vector<test::NamedTensor> inputs = {{"hidden", hidden}};
    for (const auto& p : softmax->named_parameters()) inputs.push_back({p.key(), p.value()});
    test::expect_gradients_match_finite_differences([&] { return softmax->nll(hidden, targets).sum(); }, inputs);
  }
}

// Tied tensors are the embedding's own: registered once (so an optimizer steps them once and
// count_parameters counts them once), and the gradients of both uses add up in one .grad.
TEST(ProjectedAdaptiveLogSoftmax, TiedTensorsAreOneTensorWithOneGradient) {
  at::manual_seed(6);
  for (const int64_t div_val : {1, 2}) {
    const auto c = clusters({5, 12}, div_val, 8);
    AdaptiveEmbedding embedding(c);
    auto softmax = make_softmax(c, /*tie_weight=*/true, /*tie_projs=*/true, embedding);
    for (int64_t i = 0; i < c.matrix_count(); ++i) EXPECT_TRUE(softmax->weight(i).is_same(embedding->weight(i)));
    EXPECT_FALSE(softmax->projection(0).is_same(embedding->projection(0)));  // the head's is its own
    for (int64_t i = 1; i < c.count(); ++i)
      EXPECT_TRUE(softmax->projection(i).is_same(embedding->projection(div_val == 1 ? 0 : i)));
    for (const auto& p : softmax->named_parameters())
      EXPECT_TRUE(p.key().rfind("bias_", 0) == 0 || p.key().rfind("cluster_", 0) == 0 || p.key() == "projection_0")
          << p.key() << " is tied and must not be registered again";

    const auto tokens = at::tensor(std::vector<int64_t>{1, 6, 13, 19});
    const auto hidden = at::randn({4, kWidth});
    const auto targets = at::tensor(std::vector<int64_t>{7, 0, 18, 12});
    const auto& weight = embedding->weight(0);
    const auto gradient_of = [&](bool input, bool output) {  // of the input use, the output use, or both
      weight.mutable_grad() = torch::Tensor();
      auto loss = at::zeros({});
      if (input) loss = loss + embedding(tokens).pow(2).sum();
      if (output) loss = loss + softmax->nll(hidden, targets).sum();
      loss.backward();
      return weight.grad().clone();
    };
    const auto both = gradient_of(true, true);
    EXPECT_TRUE(at::allclose(both, gradient_of(true, false) + gradient_of(false, true), 1e-5, 1e-6));
  }
}

TEST(ProjectedAdaptiveLogSoftmax, TyingNeedsAnEmbeddingThatSplitsAlike) {
  ProjectedAdaptiveLogSoftmaxOptions options;
  options.clusters = clusters({5}, 1);
  options.tie_weight = true;
  EXPECT_EQ(error_of([&] { ProjectedAdaptiveLogSoftmax softmax(options); }),
            "ProjectedAdaptiveLogSoftmax: tie_weight and tie_projs need the embedding to tie to");
  EXPECT_EQ(error_of([&] { ProjectedAdaptiveLogSoftmax softmax(options, AdaptiveEmbedding(clusters({6}, 1))); }),
            "ProjectedAdaptiveLogSoftmax: tied to an embedding that splits the vocabulary differently (sizes, "
            "cutoffs or div_val differ)");
}

}  // namespace
}  // namespace mixseq
