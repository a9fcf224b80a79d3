#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "mixseq/models/gnmt.h"
#include "mixseq/models/transformer.h"
#include "mixseq/nn/multihead_attention.h"
#include "mixseq/nn/quantizable_embedding.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantization_point.h"
#include "mixseq/quant/activation_statistics.h"
#include "mixseq/quant/calibration.h"
#include "mixseq/quant/quantization_config.h"
#include "mixseq/quant/quantization_plan.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

TEST(ActivationStatistics, RangesOfKnownBatchesAsComputedByHand) {
  at::manual_seed(6);
  ActivationStatistics stats(/*percentile=*/99);
  EXPECT_NE(error_of([&] { stats.range("avg"); }).find("no calibration batch"), std::string::npos);
  // 0..99 and -50..49, shuffled. Nearest-rank 99th percentile of 100 values: the 99th smallest
  // (98 and 48); the low end, 1st percentile: the 2nd smallest (1 and -49).
  stats.add(at::arange(0, 100, at::kFloat).index_select(0, at::randperm(100)).view({4, 25}));
  stats.add(at::arange(-50, 50, at::kFloat).index_select(0, at::randperm(100)));
  EXPECT_EQ(stats.batches(), 2);
  EXPECT_DOUBLE_EQ(stats.min(), -50);
  EXPECT_DOUBLE_EQ(stats.max(), 99);
  EXPECT_EQ(stats.range("none"), std::make_pair(-50.0, 99.0));
  EXPECT_EQ(stats.range("avg"), std::make_pair(-25.0, 74.0));        // (0 - 50) / 2, (99 + 49) / 2
  EXPECT_EQ(stats.range("percentile"), std::make_pair(-24.0, 73.0));  // (1 - 49) / 2, (98 + 48) / 2
}

TEST(ActivationStatistics, WithoutPercentilesKeepsTheOtherRangesAndRejectsPercentileClipping) {
  ActivationStatistics stats(/*percentile=*/0);
  stats.add(at::arange(0, 100, at::kFloat));
  stats.add(at::arange(-50, 50, at::kFloat));
  EXPECT_EQ(stats.range("none"), std::make_pair(-50.0, 99.0));
  EXPECT_EQ(stats.range("avg"), std::make_pair(-25.0, 74.0));
  EXPECT_NE(error_of([&] { stats.range("percentile"); }).find("calibrated without percentiles"), std::string::npos);
}

constexpr const char* kConfig = R"(mode: simulated
defaults: {bits: 8, clip: avg}
layers:
  - {pattern: "attention.*", clip: none}
  - {pattern: attention.query_proj, keep_float: true}
  - {pattern: classifier, bits: 16, weight_per_channel: false}
)";

TEST(QuantizationConfig, OverridesApplyInOrderOverTheDefaults) {
  const auto config = parse_quantization_config(kConfig, "quant.yaml");
  EXPECT_EQ(config.mode, "simulated");
  const auto key = config.settings_for("attention.key_proj");
  EXPECT_EQ(key.clip, "none");
  EXPECT_FALSE(key.keep_float);
  const auto query = config.settings_for("attention.query_proj");
  EXPECT_EQ(query.clip, "none");
  EXPECT_TRUE(query.keep_float);
  const auto classifier = config.settings_for("classifier");
  EXPECT_EQ(classifier.bits, 16);
  EXPECT_FALSE(classifier.weight_per_channel);
  EXPECT_EQ(classifier.clip, "none");  // the built-in override of the output layer, kept by the file's entry
  EXPECT_EQ(config.settings_for("output_projection").clip, "none");
  const auto clipped = parse_quantization_config("layers: [{pattern: classifier, clip: percentile}]", "q.yaml");
  EXPECT_EQ(clipped.settings_for("classifier").clip, "percentile");  // a file's entry comes after it
  const auto other = config.settings_for("decoder_layers.0.fc1");
  EXPECT_EQ(other.clip, "avg");
  EXPECT_TRUE(other.weight_per_channel);
  EXPECT_EQ(parse_quantization_config("", "empty.yaml").mode, "int8");  // all defaults
}

TEST(QuantizationConfig, RejectsUnknownKeysAndBadValuesWithTheFix) {
  const auto error = [](const std::string& yaml) { return error_of([&] { parse_quantization_config(yaml, "q.yaml"); }); };
  EXPECT_NE(error("defalts: {bits: 8}").find("did you mean 'defaults'"), std::string::npos) << error("defalts: {}");
  EXPECT_NE(error("defaults: {clipp: avg}").find("clip"), std::string::npos);
  EXPECT_NE(error("layers:\n  - {pattern: x, clipp: none}").find("clip"), std::string::npos);
  EXPECT_NE(error("layers:\n  - {clip: none}").find("needs a pattern"), std::string::npos);
  EXPECT_NE(error("defaults: {bits: 4}").find("bits must be 8 or 16"), std::string::npos);
  EXPECT_NE(error("defaults: {clip: max}").find("clip"), std::string::npos);
  EXPECT_NE(error("mode: fp4").find("mode"), std::string::npos);
}

GnmtModel tiny_gnmt() {
  GnmtConfig config;
  config.hidden_size = 16;
  config.num_layers = 2;
  config.dropout = 0;
  at::manual_seed(7);
  GnmtModel model(config, /*vocab_size=*/30);
  model->eval();
  return model;
}

struct GnmtRun {
  torch::Tensor projected_keys;  // [B, S, H], from attention.key_proj
  torch::Tensor logits;          // [B, T, V]
};

GnmtRun run(GnmtModel& model) {
  torch::NoGradGuard no_grad;
  at::manual_seed(8);
  const auto source = at::randint(4, 30, {3, 5}, at::kLong), target = at::randint(4, 30, {3, 4}, at::kLong);
  const auto lengths = at::tensor({5, 4, 2}, at::kLong);
  auto state = model->start(source, lengths);
  const auto keys = dynamic_cast<GnmtState&>(*state).projected_keys;
  std::vector<torch::Tensor> logits;
  for (int64_t t = 0; t < target.size(1); ++t) logits.push_back(model->step(*state, target.select(1, t)).logits);
  return {keys, at::stack(logits, 1)};
}

QuantizationPlan calibrated_plan(GnmtModel& model, const QuantizationConfig& config) {
  const Calibration calibration(*model, config);
  run(model);
  return make_quantization_plan(config, calibration);
}

// The names of `model`'s quantizable modules of type Impl, in registration order.
template <typename Impl>
std::vector<std::string> names_of(torch::nn::Module& model) {
  std::vector<std::string> names;
  const auto modules = model.named_modules();
  for (const auto& name : quantizable_layer_names(model))
    if (dynamic_cast<Impl*>(modules[name].get())) names.push_back(name);
  return names;
}

TEST(Calibration, WatchesTheQuantizedLayersWhileItLives) {
  auto model = tiny_gnmt();
  // Registration order, linear layers: the bidirectional first encoder layer's products first.
  EXPECT_EQ(names_of<QuantizableLinearImpl>(*model),
            (std::vector<std::string>{"encoder_bi_lstm.input_product", "encoder_bi_lstm.hidden_product",
                                      "encoder_bi_lstm.reverse_input_product", "encoder_bi_lstm.reverse_hidden_product",
                                      "encoder_layers.layers.0.input_product", "encoder_layers.layers.0.hidden_product",
                                      "decoder_lstm.input_product", "decoder_lstm.hidden_product",
                                      "attention.query_proj", "attention.key_proj",
                                      "decoder_layers.layers.0.input_product",
                                      "decoder_layers.layers.0.hidden_product", "classifier"}));
  EXPECT_EQ(names_of<QuantizableEmbeddingImpl>(*model), std::vector<std::string>{"embedding"});
  const auto points = names_of<QuantizationPointImpl>(*model);
  // 10 per LSTM cell (2 in the bidirectional layer, 3 unidirectional), the bidirectional
  // layer's concat, 6 in the attention, the decoder stack's concat (no residual add with 1
  // layer per stack).
  EXPECT_EQ(points.size(), 5 * 10 + 1 + 6 + 1u);
  for (const char* name : {"encoder_bi_lstm.reverse_cell.tanh_c", "encoder_bi_lstm.concat", "decoder_lstm.cell.gates",
                           "attention.score_sum",
                           "attention.normalized_v", "attention.weights", "decoder_layers.concat_0"})
    EXPECT_NE(std::find(points.begin(), points.end(), name), points.end()) << name;
  const auto config = parse_quantization_config("layers: [{pattern: \"*_product\", keep_float: true}]", "q");
  {
    const Calibration calibration(*model, config);
    run(model);
    const auto& stats = calibration.statistics();
    ASSERT_EQ(stats.size(), 3u);  // the float-kept layers are not watched
    EXPECT_EQ(stats.at("attention.key_proj").input.batches(), 1);  // once per batch, at start()
    EXPECT_EQ(stats.at("classifier").output.batches(), 4);         // once per step
    // What the classifier computed: its output range contains every logit seen.
    const auto logits = run(model).logits;
    EXPECT_LE(stats.at("classifier").output.min(), logits.min().item<double>() + 1e-6);
  }
  QuantizableLinearImpl* classifier = nullptr;
  for (const auto& item : model->named_modules())
    if (item.key() == "classifier") classifier = dynamic_cast<QuantizableLinearImpl*>(item.value().get());
  ASSERT_NE(classifier, nullptr);
  bool observed = false;
  classifier->set_observer([&](const torch::Tensor&, const torch::Tensor&) { observed = true; });
  run(model);
  EXPECT_TRUE(observed) << "the destructor must leave other observers' slot usable";
}

TEST(QuantizationPlan, LayersKeptInFloatAreBitIdenticalToTheFloatModel) {
  auto model = tiny_gnmt();
  const auto reference = run(model);
  const auto config = parse_quantization_config(
      "mode: simulated\nlayers: [{pattern: \"encoder*\", keep_float: true},\n"
      "  {pattern: embedding, keep_float: true}, {pattern: attention.key_proj, keep_float: true}]", "q.yaml");
  const auto plan = calibrated_plan(model, config);
  // The decoder's 3 linear layers, 2 LSTM cells of 10 points, the attention's 6 points but
  // key_proj, the concat and the classifier.
  ASSERT_EQ(plan.layers.size(), 4 + 20 + 1 + 6 + 1 + 1u);
  apply_quantization_plan(*model, plan);
  const auto quantized = run(model);
  // The embedding, the encoder and key_proj stay float: the attention keys are exactly the float ones.
  EXPECT_TRUE(at::equal(quantized.projected_keys, reference.projected_keys));
  // The quantized decoder LSTMs, query projection and classifier do change the logits, by little.
  EXPECT_FALSE(at::equal(quantized.logits, reference.logits));
  EXPECT_LT((quantized.logits - reference.logits).abs().max().item<double>(), 0.1);

  // A later plan sets every layer it does not name back to float.
  apply_quantization_plan(*model, QuantizationPlan{"simulated", {}});
  EXPECT_TRUE(at::equal(run(model).logits, reference.logits));

  auto all_float = tiny_gnmt();
  apply_quantization_plan(*all_float, calibrated_plan(all_float, parse_quantization_config(
                                                                      "defaults: {keep_float: true}", "q.yaml")));
  EXPECT_TRUE(at::equal(run(all_float).logits, reference.logits));
}

TEST(QuantizationPlan, RoundTripsThroughJsonAndRejectsUnknownLayers) {
  auto model = tiny_gnmt();
  const auto plan = calibrated_plan(model, parse_quantization_config(kConfig, "quant.yaml"));
  const auto restored = QuantizationPlan::from_json(plan.to_json(), "plan");
  EXPECT_EQ(restored.mode, "simulated");
  ASSERT_EQ(restored.layers.size(), plan.layers.size());
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    EXPECT_EQ(restored.layers[i].name, plan.layers[i].name);
    EXPECT_EQ(restored.layers[i].settings.bits, plan.layers[i].settings.bits);
    EXPECT_EQ(restored.layers[i].settings.clip, plan.layers[i].settings.clip);
    EXPECT_EQ(restored.layers[i].input_max, plan.layers[i].input_max);  // JSON keeps doubles exactly
    EXPECT_EQ(restored.layers[i].output_min, plan.layers[i].output_min);
  }
  auto renamed = plan;
  renamed.layers[0].name = "decoder.fc9";
  EXPECT_NE(error_of([&] { apply_quantization_plan(*model, renamed); }).find("'decoder.fc9'"), std::string::npos);
  // 16 bits run only in simulation.
  const auto int8_16 = parse_quantization_config("mode: int8\ndefaults: {bits: 16}", "q.yaml");
  EXPECT_NE(error_of([&] { calibrated_plan(model, int8_16); }).find("runs only in mode: simulated"),
            std::string::npos);
}

TEST(Calibration, RecordsThePointsOfAKnownAttention) {
  at::manual_seed(31);
  MultiheadAttention attention(MultiheadAttentionOptions{4, 1, 0.0});
  attention->eval();
  const auto config = parse_quantization_config("mode: simulated", "q.yaml");
  const auto query = at::randn({1, 2, 4}), memory = at::randn({1, 3, 4});
  const Calibration calibration(*attention, config);
  torch::NoGradGuard no_grad;
  const auto cache = attention->project_key_value(memory);
  const torch::Tensor weights = std::get<1>(attention(query, cache, /*key_padding_mask=*/torch::Tensor(), /*causal=*/false, true));
  // By hand: one head, scores q k^T / sqrt(4) from the projections.
  const auto& q_proj = dynamic_cast<QuantizableLinearImpl&>(*attention->named_children()["q_proj"]);
  const auto& k_proj = dynamic_cast<QuantizableLinearImpl&>(*attention->named_children()["k_proj"]);
  const auto q = at::linear(query, q_proj.weight, q_proj.bias), k = at::linear(memory, k_proj.weight, k_proj.bias);
  const auto scores = at::matmul(q, k.transpose(1, 2)) / 2;  // [1, 2, 3]
  const auto& stats = calibration.statistics();
  ASSERT_EQ(stats.count("scores"), 1u);
  EXPECT_EQ(stats.at("scores").input.batches(), 1);
  EXPECT_NEAR(stats.at("scores").input.min(), scores.min().item<double>(), 1e-6);
  EXPECT_NEAR(stats.at("scores").input.max(), scores.max().item<double>(), 1e-6);
  EXPECT_NEAR(stats.at("weights").input.max(), weights.max().item<double>(), 1e-7);
  EXPECT_NEAR(stats.at("context").input.min(), at::matmul(weights, cache.values).min().item<double>(), 1e-6);
  EXPECT_EQ(stats.at("context").output.batches(), 0) << "a point has one activation";
  const auto plan = make_quantization_plan(config, calibration);
  const auto found = std::find_if(plan.layers.begin(), plan.layers.end(), [](const auto& l) { return l.name == "weights"; });
  ASSERT_NE(found, plan.layers.end());
  EXPECT_EQ(found->output_max, found->input_max);
}

TEST(QuantizationPlan, Int8LeavesPointsAndEmbeddingsInFloatAndRefusesThem) {
  auto model = tiny_gnmt();
  const auto reference = run(model);
  const auto int8 = parse_quantization_config("mode: int8\nlayers: [{pattern: \"*\", keep_float: true},\n"
                                              "  {pattern: \"attention.*\", keep_float: false}]", "q.yaml");
  const auto plan = calibrated_plan(model, int8);
  ASSERT_EQ(plan.layers.size(), 2u) << "only the attention's linear layers; its points stay fp32 in int8";
  auto simulated = calibrated_plan(model, parse_quantization_config("mode: simulated", "q.yaml"));
  simulated.mode = "int8";
  const auto error = error_of([&] { apply_quantization_plan(*model, simulated); });
  EXPECT_NE(error.find("which is quantized in mode: simulated only"), std::string::npos) << error;
  apply_quantization_plan(*model, QuantizationPlan{"simulated", {}});
  EXPECT_TRUE(at::equal(run(model).logits, reference.logits));
}

TEST(QuantizationConfig, RejectsUnknownKeysForPoints) {
  const auto error = error_of([&] {
    parse_quantization_config("mode: simulated\nlayers:\n  - {pattern: \"*.cell.sigmoid_*\", clipping: none}", "q.yaml");
  });
  EXPECT_NE(error.find("q.yaml layers[0] (line 3)"), std::string::npos) << error;
  EXPECT_NE(error.find("clip"), std::string::npos) << error;
}

TEST(QuantizationPlan, FullSimulationOfATransformerChangesItsLogitsByLittle) {
  TransformerConfig config;
  config.embed_dim = 16;
  config.ffn_dim = 32;
  config.heads = 2;
  config.encoder_layers = config.decoder_layers = 1;
  config.dropout = 0;
  at::manual_seed(32);
  TransformerModel model(config, /*vocab_size=*/30);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto source = at::randint(4, 30, {2, 5}, at::kLong), target = at::randint(4, 30, {2, 4}, at::kLong);
  const auto lengths = at::tensor({5, 3}, at::kLong);
  const torch::Tensor reference = model(source, lengths, target);
  const auto simulated_config = parse_quantization_config("mode: simulated\ndefaults: {clip: none}", "q.yaml");
  QuantizationPlan plan;
  {
    const Calibration calibration(*model, simulated_config);
    model(source, lengths, target);
    plan = make_quantization_plan(simulated_config, calibration);
  }
  const auto names = quantizable_layer_names(*model);
  EXPECT_EQ(plan.layers.size(), names.size()) << "every linear layer, the embedding and every point ran";
  for (const char* name : {"embedding", "encoder_positions_add", "decoder_layers.0.encoder_attn.scores",
                           "decoder_layers.0.encoder_attn_residual_add", "encoder_layers.0.ffn_residual_add"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  apply_quantization_plan(*model, plan);
  const torch::Tensor simulated = model(source, lengths, target);
  EXPECT_FALSE(at::equal(simulated, reference));
  EXPECT_LT((simulated - reference).abs().max().item<double>(), 0.5);
  apply_quantization_plan(*model, QuantizationPlan{"simulated", {}});
  EXPECT_TRUE(at::equal(model(source, lengths, target), reference)) << "float again, bit for bit";
}

}  // namespace
}  // namespace mixseq
