// Real int8 on a Transformer whose output projection is tied to its embedding.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "mixseq/models/transformer.h"
#include "mixseq/quant/calibration.h"
#include "mixseq/quant/quantization_config.h"
#include "mixseq/quant/quantization_plan.h"
#include "mixseq/util/int8_engine.h"

namespace mixseq {
namespace {


TransformerModel tiny_tied_transformer() {
  TransformerConfig config;
  config.embed_dim = 16;
  config.ffn_dim = 32;
  config.heads = 2;
  config.encoder_layers = 1;
  config.decoder_layers = 1;
  config.dropout = 0.0;
  at::manual_seed(11);
  TransformerModel model(config, /*vocab_size=*/40);
  model->eval();
  return model;
}

torch::Tensor logits(TransformerModel& model) {  // [B, T, V]
  torch::NoGradGuard no_grad;
  at::manual_seed(12);
  const auto source = at::randint(4, 40, {3, 6}, at::kLong), target = at::randint(4, 40, {3, 5}, at::kLong);
  return model->forward(source, at::tensor({6, 5, 3}, at::kLong), target);
}

QuantizationPlan output_projection_plan(TransformerModel& model, const std::string& mode) {
  const auto config = parse_quantization_config(
      "mode: " + mode + "\ndefaults: {keep_float: true}\nlayers: [{pattern: output_projection, keep_float: false}]",
      "q.yaml");
  const Calibration calibration(*model, config);
  logits(model);
  return make_quantization_plan(config, calibration);
}

TEST(Int8Transformer, TiedOutputProjectionIsQuantizableAndEqualsSimulatedWithinOneStep) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  auto model = tiny_tied_transformer();
  const auto names = quantizable_layer_names(*model);
  EXPECT_NE(std::find(names.begin(), names.end(), "output_projection"), names.end());
  EXPECT_EQ(model->named_parameters().find("output_projection.weight"), nullptr) << "checkpoint keys unchanged";
  const auto embedding = model->decoder_embedding_weight().clone();
  const auto float_logits = logits(model);

  const auto plan = output_projection_plan(model, "int8");  // both calibrated on the float model
  ASSERT_EQ(plan.layers.size(), 1u);
  apply_quantization_plan(*model, output_projection_plan(model, "simulated"));
  const auto simulated = logits(model);
  apply_quantization_plan(*model, plan);
  const auto int8 = logits(model);

  const double step = (plan.layers[0].output_max - plan.layers[0].output_min) / 255;
  EXPECT_FALSE(at::equal(int8, float_logits)) << "the projection must really run quantized";
  EXPECT_LE((int8 - simulated).abs().max().item<double>(), step * 1.001);
  // Its own int8 copy: the embedding the decoder reads stays the float one.
  EXPECT_TRUE(at::equal(model->decoder_embedding_weight(), embedding));
}

}  // namespace
}  // namespace mixseq
