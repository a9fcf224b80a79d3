// The simulation seam beyond linear layers: quantization points, the quantizable embedding, the
// LSTM cell's and the bidirectional LSTM's points and products, and the attention's points.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/embedding.h>

#include <string>
#include <vector>

#include "mixseq/nn/bahdanau_attention.h"
#include "mixseq/nn/bidirectional_lstm.h"
#include "mixseq/nn/float_attention_core.h"
#include "mixseq/nn/multihead_attention.h"
#include "mixseq/nn/quantizable_embedding.h"
#include "mixseq/nn/quantizable_lstm.h"
#include "mixseq/nn/quantization_point.h"
#include "mixseq/nn/residual_lstm_stack.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

QuantizationGrid range_grid(double lo, double hi, bool symmetric) {
  return make_quantization_grid(at::scalar_tensor(lo), at::scalar_tensor(hi), 8, symmetric);
}

template <typename Impl>
Impl& child(torch::nn::Module& module, const std::string& path) {
  auto* found = dynamic_cast<Impl*>(module.named_modules()[path].get());
  EXPECT_NE(found, nullptr) << path;
  return *found;
}

// Sets every point under `module` to an 8-bit grid over [-4, 4], wide enough for the values of
// these small models, so the simulation rounds (half step 1/64) but hardly clips.
void quantize_every_point(torch::nn::Module& module) {
  for (const auto& item : module.named_modules())
    if (auto* point = dynamic_cast<QuantizationPointImpl*>(item.value().get())) point->set_grid(range_grid(-4, 4, false));
}

TEST(QuantizationPoint, FloatPassesTheTensorItselfAndSimulationMatchesPyTorch) {
  QuantizationPoint point;
  const auto x = at::linspace(-3, 5, 101);
  EXPECT_FALSE(point->active());
  EXPECT_TRUE(point(x).is_same(x)) << "float must not touch the tensor (no copy, no op)";

  // Asymmetric 8 bits over [-2, 4]: scale 6/255, zero point round(2 / scale) = 85 (hand-computed).
  const auto grid = range_grid(-2, 4, false);
  EXPECT_FLOAT_EQ(grid.scale.item<float>(), 6.0f / 255);
  EXPECT_EQ(grid.zero_point.item<int64_t>(), 85);
  point->set_grid(grid);
  EXPECT_TRUE(point->active());
  const auto expected = at::fake_quantize_per_tensor_affine(x, grid.scale.item<double>(), 85, 0, 255);
  EXPECT_TRUE(at::allclose(point(x), expected, 0, 1e-6));
  EXPECT_FLOAT_EQ(point(at::tensor({10.0f})).item<float>(), (255 - 85) * 6.0f / 255);  // clamps to the top
  EXPECT_FLOAT_EQ(point(at::tensor({0.0f})).item<float>(), 0.0f);                     // 0 is exact

  int64_t seen = 0;
  point->set_observer([&](const torch::Tensor& t) { seen += t.numel(); });
  point(x);
  EXPECT_EQ(seen, 101);
  point->set_grid({});
  point->set_observer({});
  EXPECT_TRUE(point(x).is_same(x));
  EXPECT_THROW(point->set_grid(make_quantization_grid(at::zeros({3}), at::ones({3}), 8, true)), std::exception);
}

TEST(QuantizableEmbedding, FloatIsTorchEmbeddingAndSimulationLooksUpTheRoundedTable) {
  const auto options = torch::nn::EmbeddingOptions(7, 5).padding_idx(0);
  at::manual_seed(21);
  torch::nn::Embedding reference(options);
  at::manual_seed(21);
  QuantizableEmbedding embedding(options);
  ASSERT_EQ(embedding->named_parameters().keys(), reference->named_parameters().keys());
  const auto tokens = at::tensor({1, 2, 6, 0, 3, 3}, at::kLong).view({2, 3});
  EXPECT_TRUE(at::equal(embedding(tokens), reference(tokens)));

  // Per-tensor symmetric: every row from the table fake-quantized by PyTorch itself.
  const auto& w = embedding->weight;
  const auto grid = make_quantization_grid(w.min().detach(), w.max().detach(), 8, true);
  embedding->set_weight_grid(grid);
  const auto table = at::fake_quantize_per_tensor_affine(w.detach(), grid.scale.item<double>(), 0, -127, 127);
  EXPECT_TRUE(at::allclose(embedding(tokens), table.index_select(0, tokens.view(-1)).view({2, 3, 5}), 0, 1e-7));
  // Per row (per token): one scale per row, max|row| / 127 (hand-computed from the rows).
  const auto rows = make_quantization_grid(std::get<0>(w.detach().min(1)), std::get<0>(w.detach().max(1)), 8, true);
  embedding->set_weight_grid(rows);
  auto scale = w.detach().abs().amax(1, /*keepdim=*/true) / 127;  // [7, 1]
  scale = at::where(scale > 0, scale, at::ones_like(scale));       // the zero <pad> row: scale 1
  EXPECT_TRUE(at::allclose(embedding(tokens),
                           (at::round(w.detach() / scale) * scale).index_select(0, tokens.view(-1)).view({2, 3, 5}),
                           0, 1e-6));
  embedding->set_weight_grid({});
  EXPECT_TRUE(at::equal(embedding(tokens), reference(tokens)));
}

TEST(QuantizableLstmCell, PointsForceTheStepLoopAndRoundTheCell) {
  at::manual_seed(22);
  QuantizableLstm lstm(4, 6);
  const auto x = at::randn({3, 5, 4});
  torch::NoGradGuard no_grad;
  const auto fused = std::get<0>(lstm->forward(x, torch::nullopt));
  auto& h = child<QuantizationPointImpl>(*lstm, "cell.h");
  int64_t steps = 0;
  h.set_observer([&](const torch::Tensor&) { ++steps; });
  const auto stepped = std::get<0>(lstm->forward(x, torch::nullopt));
  EXPECT_EQ(steps, 5) << "an observed cell point must take the step loop";
  EXPECT_TRUE(at::allclose(stepped, fused, 1e-5, 1e-6));
  h.set_observer({});

  // h on an 8-bit asymmetric grid over [-1, 1]: step 2/255, and 0 is on the grid, so every
  // output is a whole number of steps.
  h.set_grid(range_grid(-1, 1, false));
  const auto rounded = std::get<0>(lstm->forward(x, torch::nullopt));
  const double step = 2.0 / 255;
  const auto q = rounded / step;
  EXPECT_LT((q - q.round()).abs().max().item<double>(), 1e-3);
  EXPECT_GT((rounded - fused).abs().max().item<double>(), 0.0);
  EXPECT_LE((rounded - fused).abs().max().item<double>(), 0.05);
}

// Float here runs nn/lstm_recurrence.h per direction (test_lstm_blocks.cpp compares it with the
// packed LSTM); the step loop by the products must give the same.
TEST(BidirectionalLstm, StepLoopMatchesTheFloatLayerAndQuantizesBothDirections) {
  at::manual_seed(23);
  BidirectionalLstm lstm(BidirectionalLstmOptions{4, 6, 0.3});
  EXPECT_EQ(lstm->named_parameters().size(), 8u) << "the products and cells add no parameters";
  const auto x = at::randn({3, 5, 4});
  const auto lengths = at::tensor({5, 2, 4}, at::kLong);
  torch::NoGradGuard no_grad;
  const auto packed = lstm(x, lengths);
  auto& reverse_product = child<QuantizableLinearImpl>(*lstm, "reverse_input_product");
  EXPECT_EQ(reverse_product.weight.data_ptr(), lstm->named_parameters()["lstm.weight_ih_l0_reverse"].data_ptr());
  int64_t calls = 0;
  reverse_product.set_observer([&](const torch::Tensor&, const torch::Tensor&) { ++calls; });
  const auto stepped = lstm(x, lengths);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(at::allclose(stepped, packed, 1e-5, 1e-6)) << (stepped - packed).abs().max();
  reverse_product.set_observer({});

  // The concatenation's point sees both directions side by side.
  torch::Tensor concat;
  child<QuantizationPointImpl>(*lstm, "concat").set_observer([&](const torch::Tensor& t) { concat = t; });
  const auto observed = lstm(x, lengths);
  ASSERT_TRUE(concat.defined());
  EXPECT_EQ(concat.sizes(), (std::vector<int64_t>{3, 5, 12}));
  EXPECT_TRUE(at::allclose(concat.select(0, 0), packed.select(0, 0), 1e-5, 1e-6)) << "row 0 has no padding";
  EXPECT_TRUE(at::allclose(observed, packed, 1e-5, 1e-6));
  child<QuantizationPointImpl>(*lstm, "concat").set_observer({});
  // Its grid alone rounds the layer's output (within a step: the step loop differs from the
  // packed layer by ~1e-6), and the padding stays exactly 0.
  const auto grid = range_grid(-4, 4, false);
  child<QuantizationPointImpl>(*lstm, "concat").set_grid(grid);
  const auto rounded = lstm(x, lengths);
  const auto expected =
      at::fake_quantize_per_tensor_affine(packed, grid.scale.item<double>(), grid.zero_point.item<int64_t>(), 0, 255);
  EXPECT_TRUE(at::allclose(rounded, expected, 0, grid.scale.item<double>() + 1e-6));
  EXPECT_GT((rounded - packed).abs().max().item<double>(), 1e-4);
  EXPECT_TRUE(at::equal(rounded.select(0, 1).slice(0, 2), at::zeros({3, 12})));
  child<QuantizationPointImpl>(*lstm, "concat").set_grid({});

  // Both directions' points quantized: the result moves by little, padding stays exactly 0.
  quantize_every_point(*lstm);
  const auto simulated = lstm(x, lengths);
  EXPECT_GT((simulated - packed).abs().max().item<double>(), 0.0);
  EXPECT_LT((simulated - packed).abs().max().item<double>(), 0.1);
  EXPECT_TRUE(at::equal(simulated.select(0, 1).slice(0, 2), at::zeros({3, 12})));
}

TEST(ResidualLstmStack, ConcatAndResidualPointsSeeTheirActivations) {
  at::manual_seed(24);
  ResidualLstmStackOptions options;
  options.input_size = options.hidden_size = 6;
  options.num_layers = 2;
  options.extra_input_size = 3;
  ResidualLstmStack stack(options);
  stack->eval();
  const auto names = stack->named_children().keys();
  EXPECT_NE(std::find(names.begin(), names.end(), "concat_0"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "residual_add_1"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "residual_add_0"), names.end()) << "layer 0 has no residual";
  const auto x = at::randn({2, 4, 6}), extra = at::randn({2, 4, 3});
  torch::NoGradGuard no_grad;
  const auto reference = std::get<0>(stack(x, extra));
  torch::Tensor concat, sum;
  child<QuantizationPointImpl>(*stack, "concat_0").set_observer([&](const torch::Tensor& t) { concat = t; });
  child<QuantizationPointImpl>(*stack, "residual_add_1").set_observer([&](const torch::Tensor& t) { sum = t; });
  const auto observed = std::get<0>(stack(x, extra));
  EXPECT_TRUE(at::equal(concat, at::cat({x, extra}, -1)));
  EXPECT_TRUE(at::equal(sum, observed)) << "the last residual add is the stack's output";
  EXPECT_TRUE(at::allclose(observed, reference, 1e-5, 1e-6));
}

TEST(BahdanauAttention, PointsAreIdentityInFloatAndRoundInSimulation) {
  at::manual_seed(25);
  BahdanauAttention attention(BahdanauAttentionOptions{5, 5, 5, 0.3});
  const auto query = at::randn({2, 3, 5}), keys = at::randn({2, 4, 5});
  const auto pad_mask = at::tensor({0, 0, 0, 1, 0, 0, 0, 0}, at::kLong).view({2, 4}).to(at::kBool);
  torch::NoGradGuard no_grad;
  const auto projected = attention->project_keys(keys);
  torch::Tensor context, weights, context2, weights2, context3, weights3;
  std::tie(context, weights) = attention(query, keys, projected, pad_mask);
  torch::Tensor seen_weights;
  child<QuantizationPointImpl>(*attention, "weights").set_observer([&](const torch::Tensor& t) { seen_weights = t; });
  std::tie(context2, weights2) = attention(query, keys, projected, pad_mask);
  EXPECT_TRUE(at::equal(context, context2));
  EXPECT_TRUE(at::equal(seen_weights, weights));
  child<QuantizationPointImpl>(*attention, "weights").set_observer({});

  child<QuantizationPointImpl>(*attention, "weights").set_grid(range_grid(0, 1, false));
  std::tie(context3, weights3) = attention(query, keys, projected, pad_mask);
  const auto q = weights3 * 255;
  EXPECT_LT((q - q.round()).abs().max().item<double>(), 1e-4) << "weights on the grid of step 1/255";
  EXPECT_EQ(weights3[0].select(1, 3).abs().max().item<double>(), 0.0) << "padding keeps weight 0";
  EXPECT_LT((context3 - context).abs().max().item<double>(), 0.05);
}

TEST(MultiheadAttention, PointsAreIdentityInFloatAndRoundInSimulation) {
  at::manual_seed(26);
  MultiheadAttention attention(MultiheadAttentionOptions{8, 2, 0.0});
  attention->eval();
  const auto query = at::randn({2, 3, 8}), memory = at::randn({2, 4, 8});
  const auto pad_mask = at::tensor({0, 0, 1, 1, 0, 0, 0, 0}, at::kLong).view({2, 4}).to(at::kBool);
  torch::NoGradGuard no_grad;
  const auto cache = attention->project_key_value(memory);
  const torch::Tensor reference = std::get<0>(attention(query, cache, pad_mask, /*causal=*/false));
  torch::Tensor scores;
  child<QuantizationPointImpl>(*attention, "scores").set_observer([&](const torch::Tensor& t) { scores = t; });
  const auto observed = std::get<0>(attention(query, cache, pad_mask, false));
  ASSERT_TRUE(scores.defined()) << "an observed point takes the plain kernel";
  const auto heads = [](const torch::Tensor& x) { return x.view({x.size(0), x.size(1), 2, 4}).transpose(1, 2); };
  if (compat::has_fused_attention() || takes_float_attention_core(heads(query), heads(memory), heads(memory))) {
    // Unobserved, a fused kernel ran (LibTorch 2.x's, or nn/float_attention_core.h's for fp32 on
    // the CPU): the same attention, summed in another order.
    EXPECT_TRUE(at::allclose(observed, reference, 1e-5, 1e-6)) << (observed - reference).abs().max();
  } else {
    EXPECT_TRUE(at::equal(observed, reference));
  }
  EXPECT_EQ(scores.sizes(), (at::IntArrayRef{2, 2, 3, 4}));
  EXPECT_TRUE(at::isfinite(scores).all().item<bool>()) << "scores are seen before the -inf mask";
  child<QuantizationPointImpl>(*attention, "scores").set_observer({});
  quantize_every_point(*attention);
  const torch::Tensor simulated = std::get<0>(attention(query, cache, pad_mask, false));
  EXPECT_GT((simulated - reference).abs().max().item<double>(), 0.0);
  EXPECT_LT((simulated - reference).abs().max().item<double>(), 0.1);
}

}  // namespace
}  // namespace mixseq
