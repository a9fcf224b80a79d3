// A quantized checkpoint stores its int8 layers' weights in 8 bits and loads to exactly the model
// that applying the plan to the fp32 weights gives.
#include "mixseq/quant/int8_weight_storage.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "mixseq/models/registry.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/quant/calibration.h"
#include "mixseq/quant/quantized_model.h"
#include "mixseq/train/train_config.h"
#include "mixseq/util/int8_engine.h"
#include "test_support.h"

namespace mixseq {
namespace {

constexpr int64_t kVocabSize = 40;


CheckpointContents contents_of(TrainConfig config) {  // by value: fields() is not const
  CheckpointContents contents;
  contents.config_yaml = config_to_yaml(config.fields());
  contents.vocabulary_text = "<pad> 0\n<unk> 0\n<s> 0\n</s> 0\n";
  for (int64_t i = 4; i < kVocabSize; ++i) contents.vocabulary_text += "w" + std::to_string(i) + " 1\n";
  contents.tokenizer_kind = "none";
  return contents;
}

torch::Tensor logits(Seq2SeqModelImpl& model) {  // [B, T, V]
  torch::NoGradGuard no_grad;
  at::manual_seed(12);
  const auto source = at::randint(4, kVocabSize, {3, 6}, at::kLong);
  const auto target = at::randint(4, kVocabSize, {3, 5}, at::kLong);
  return model.forward(source, at::tensor({6, 5, 3}, at::kLong), target);
}

struct Saved {
  std::string today;  // fp32 weights and the plan: what mixseq quantize wrote before int8 storage
  std::string int8;   // int8 weights where the plan allows
  torch::Tensor logits;  // of the model the plan was applied to
};

Saved quantize_and_save(const TrainConfig& config, const test::TempDir& dir) {
  at::manual_seed(3);
  auto model = build_seq2seq_model(config.model, kVocabSize);
  model->eval();
  const auto float_path = dir.path("float.pt");
  save_checkpoint(float_path, contents_of(config), *model, nullptr);
  const QuantizationConfig defaults;
  QuantizationPlan plan;
  {
    const Calibration calibration(*model, defaults);
    logits(*model);
    plan = make_quantization_plan(defaults, calibration);
  }
  apply_quantization_plan(*model, plan);
  Saved saved{dir.path("today.pt"), dir.path("int8.pt"), logits(*model)};
  auto contents = contents_of(config);
  contents.quantization = plan.to_json();
  save_checkpoint(saved.today, contents, *model, nullptr);
  save_quantized_checkpoint(saved.int8, float_path, *model, plan);
  return saved;
}

TrainConfig gnmt_config() {
  TrainConfig config;
  config.model.arch = "gnmt";
  config.model.gnmt.hidden_size = 32;
  config.model.gnmt.num_layers = 3;
  config.model.gnmt.dropout = 0.0;
  return config;
}

TEST(Int8WeightStorage, GnmtLoadsToTheSameOutputsFromAFileSmallerBy3BytesAWeight) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  test::TempDir dir;
  const auto saved = quantize_and_save(gnmt_config(), dir);
  const auto today = load_translation_model(saved.today, torch::kCPU);
  const auto int8 = load_translation_model(saved.int8, torch::kCPU);
  EXPECT_TRUE(today.int8_weight_scales.empty());
  // The classifier and every unidirectional LSTM's two weights.
  EXPECT_TRUE(int8.int8_weight_scales.count("classifier.weight"));
  EXPECT_TRUE(int8.int8_weight_scales.count("decoder_lstm.weight_hh_l0"));
  EXPECT_GE(int8.int8_weight_scales.size(), 9u);
  EXPECT_TRUE(at::equal(logits(*today.model), saved.logits)) << "checkpoints written before int8 storage";
  EXPECT_TRUE(at::equal(logits(*int8.model), saved.logits));
  // 3 of every 4 bytes of the stored weights saved, less their scales and zip entries.
  double stored = 0;
  for (const auto& parameter : int8.model->named_parameters())
    if (int8.int8_weight_scales.count(parameter.key())) stored += static_cast<double>(parameter.value().numel());
  const auto today_bytes = std::filesystem::file_size(saved.today), int8_bytes = std::filesystem::file_size(saved.int8);
  EXPECT_GT(static_cast<double>(today_bytes) - static_cast<double>(int8_bytes), 2.8 * stored)
      << today_bytes << " -> " << int8_bytes;
}

TEST(Int8WeightStorage, ATiedOutputProjectionKeepsTheFloatEmbedding) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  TrainConfig config;
  config.model.arch = "transformer";
  config.model.transformer.embed_dim = 16;
  config.model.transformer.ffn_dim = 32;
  config.model.transformer.heads = 2;
  config.model.transformer.encoder_layers = 1;
  config.model.transformer.decoder_layers = 1;
  config.model.transformer.dropout = 0.0;
  test::TempDir dir;
  const auto saved = quantize_and_save(config, dir);
  const auto int8 = load_translation_model(saved.int8, torch::kCPU);
  EXPECT_FALSE(int8.int8_weight_scales.count("embedding.weight")) << "the lookups read it in float";
  EXPECT_TRUE(int8.int8_weight_scales.count("decoder_layers.0.fc1.weight"));
  EXPECT_FALSE(int8_storable_parameter(*int8.model, "output_projection"));
  EXPECT_EQ(int8_storable_parameter(*int8.model, "encoder_layers.0.fc2"), "encoder_layers.0.fc2.weight");
  EXPECT_TRUE(at::equal(logits(*int8.model), saved.logits));
}

// The loaded model runs the stored grids, not grids recomputed from the dequantized weights
// (which here happen to come out equal): scales given to the plan are the ones its layers use.
TEST(Int8WeightStorage, ThePlanRunsTheStoredScales) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  test::TempDir dir;
  const auto saved = quantize_and_save(gnmt_config(), dir);
  auto int8 = load_translation_model(saved.int8, torch::kCPU);
  const auto plan = QuantizationPlan::from_json(int8.quantization, "plan");
  auto doubled = int8_weight_scales_by_layer(*int8.model, plan, int8.int8_weight_scales);
  ASSERT_EQ(doubled.size(), int8.int8_weight_scales.size());
  for (auto& [layer, scale] : doubled) scale = scale * 2;
  apply_quantization_plan(*int8.model, plan, doubled);
  const auto modules = int8.model->named_modules();
  for (const auto& [layer, scale] : doubled) {
    const auto& linear = dynamic_cast<const QuantizableLinearImpl&>(*modules[layer]);
    EXPECT_TRUE(at::equal(linear.quantization().weight.scale, scale)) << layer;
  }
  EXPECT_FALSE(at::equal(logits(*int8.model), saved.logits));
}

TEST(Int8WeightStorage, AChangedPlanThatNoLongerCoversAStoredWeightIsAnError) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  test::TempDir dir;
  const auto saved = quantize_and_save(gnmt_config(), dir);
  auto int8 = load_translation_model(saved.int8, torch::kCPU);
  const auto plan = QuantizationPlan::from_json(int8.quantization, "plan");
  auto fewer = plan;
  fewer.layers.pop_back();
  EXPECT_NE(test::error_of([&] { int8_weight_scales_by_layer(*int8.model, fewer, int8.int8_weight_scales); })
                .find("the checkpoint's plan and weights disagree"),
            std::string::npos);
}

}  // namespace
}  // namespace mixseq
