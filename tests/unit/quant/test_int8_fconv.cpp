// Post-training quantization of ConvS2S: its weight-normalised convolutions and linear layers
// reach quant/ through derived QuantizableLinear views (nn/glu_convolution.h,
// nn/weight_norm_linear.h).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mixseq/models/fconv.h"
#include "mixseq/nn/glu_convolution.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/weight_norm_linear.h"
#include "mixseq/quant/calibration.h"
#include "mixseq/quant/quantization_config.h"
#include "mixseq/quant/quantization_plan.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/int8_engine.h"
#include "unit/models/model_test_support.h"

namespace mixseq {
namespace {

constexpr int64_t kVocab = 40;

QuantizationConfig config_of(const std::string& mode) {
  return parse_quantization_config("mode: " + mode + "\n", "q.yaml");
}

QuantizableLinearImpl& product_of(torch::nn::Module& module) {
  return dynamic_cast<QuantizableLinearImpl&>(*module.named_modules()["product"]);
}

// The windows a kernel of width k sees in x [T, B, I], unpadded: [T - k + 1, B, k I], slice by slice.
torch::Tensor windows_of(const torch::Tensor& x, int64_t k) {
  std::vector<torch::Tensor> shifted;
  for (int64_t i = 0; i < k; ++i) shifted.push_back(x.narrow(0, i, x.size(0) - k + 1));
  return at::cat(shifted, 2);
}

TEST(Int8Fconv, ConvolutionsViewIsTheirProductOverWindowsAndFollowsTheirParameters) {
  at::manual_seed(3);
  GluConvolution conv(GluConvolutionOptions{5, 4, 3});
  auto& product = product_of(*conv);
  EXPECT_EQ(conv->named_parameters().size(), 3u) << "weight_g, weight_v, bias: no parameter of the view's";
  torch::NoGradGuard no_grad;
  const auto x = at::randn({7, 2, 5});
  // The view's [2O, K I] weight lays the kernel out as the windows do: GLU of its product is the convolution.
  const auto by_view = at::glu(product.forward(windows_of(x, 3)), 2);
  EXPECT_TRUE(at::allclose(by_view, conv->forward(x), 1e-5, 1e-6));
  // Changed parameters (a loaded checkpoint) are what quantization rounds next, not the weight of construction.
  conv->weight_g.mul_(2.0);
  product.set_quantization({});
  EXPECT_TRUE(at::allclose(product.weight, conv->weight().reshape({15, 8}).t()));
  EXPECT_TRUE(at::allclose(at::glu(product.forward(windows_of(x, 3)), 2), conv->forward(x), 1e-5, 1e-6));
}

TEST(Int8Fconv, ConvolutionRunsInt8WithinOneOutputStepOfSimulatedAndGradientsStillReachGAndV) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  at::manual_seed(4);
  GluConvolution conv(GluConvolutionOptions{6, 5, 3});
  const auto x = at::randn({9, 3, 6});
  const auto float_y = conv->forward(x, 1).detach();
  const auto plan_for = [&](const std::string& mode) {
    const Calibration calibration(*conv, config_of(mode));
    torch::NoGradGuard no_grad;
    // Observed, the convolution runs through its view: the same result as unobserved.
    EXPECT_TRUE(at::allclose(conv->forward(x, 1), float_y, 1e-5, 1e-6));
    return make_quantization_plan(config_of(mode), calibration);
  };
  const auto int8_plan = plan_for("int8");
  ASSERT_EQ(int8_plan.layers.size(), 1u);
  EXPECT_EQ(int8_plan.layers[0].name, "product");
  torch::NoGradGuard no_grad;
  apply_quantization_plan(*conv, plan_for("simulated"));
  // Compare before the GLU: the product's own output grid.
  auto& product = product_of(*conv);
  const auto windows = windows_of(at::constant_pad_nd(x, {0, 0, 0, 0, 1, 1}), 3);
  const auto simulated = product.forward(windows);
  apply_quantization_plan(*conv, int8_plan);
  ASSERT_TRUE(product.runs_int8());
  const auto int8 = product.forward(windows);
  const double step = (int8_plan.layers[0].output_max - int8_plan.layers[0].output_min) / 255;
  EXPECT_LE((int8 - simulated).abs().max().item<double>(), step * 1.001);
  const auto int8_y = conv->forward(x, 1);
  EXPECT_FALSE(at::equal(int8_y, float_y)) << "the convolution must really run quantized";
  EXPECT_TRUE(at::equal(int8_y, at::glu(int8.view({9, 3, -1}), 2)));
  EXPECT_LT((int8_y - float_y).abs().max().item<double>(), 0.1 * float_y.abs().max().item<double>());

  // Back to float: training's path again, with gradients for g and V.
  apply_quantization_plan(*conv, QuantizationPlan{});
  torch::AutoGradMode grad(true);
  conv->forward(x, 1).sum().backward();
  EXPECT_TRUE(conv->weight_g.grad().defined() && conv->weight_v.grad().defined());
}

TEST(Int8Fconv, WeightNormalisedLinearRunsInt8WithinOneOutputStepOfSimulated) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  at::manual_seed(5);
  WeightNormLinear linear(WeightNormLinearOptions{8, 6});
  torch::NoGradGuard no_grad;
  linear->bias.uniform_(-0.5, 0.5);
  const auto x = at::randn({4, 5, 8});
  const auto float_y = linear->forward(x);
  QuantizationPlan plans[2];
  for (int i = 0; i < 2; ++i) {
    const auto config = config_of(i == 0 ? "int8" : "simulated");
    const Calibration calibration(*linear, config);
    EXPECT_TRUE(at::allclose(linear->forward(x), float_y, 1e-5, 1e-6));
    plans[i] = make_quantization_plan(config, calibration);
  }
  apply_quantization_plan(*linear, plans[1]);
  const auto simulated = linear->forward(x);
  apply_quantization_plan(*linear, plans[0]);
  const auto int8 = linear->forward(x);
  const double step = (plans[0].layers[0].output_max - plans[0].layers[0].output_min) / 255;
  EXPECT_FALSE(at::equal(int8, float_y));
  EXPECT_LE((int8 - simulated).abs().max().item<double>(), step * 1.001);
}

FconvModel small_model() {
  auto config = test::small_fconv_config();
  config.dropout = 0.0;
  at::manual_seed(6);
  FconvModel model(config, kVocab);
  model->eval();
  return model;
}

TEST(Int8Fconv, EveryConvolutionAndLinearIsQuantizedAndStepsStillEqualTheWholeSequence) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  auto model = small_model();
  std::vector<std::string> parameter_names;
  for (const auto& p : model->named_parameters()) parameter_names.push_back(p.key());
  const auto names = quantizable_layer_names(*model);
  // Encoder: fc1, 3 convolutions, 1 residual projection (8 -> 10), fc2. Decoder: fc1, 4 convolutions,
  // 3 attentions' in and out projections, 2 residual projections (8 -> 10, 10 -> 8), fc2, fc3.
  EXPECT_EQ(names.size(), 6u + 15u);
  for (const auto* name : {"encoder_fc1.product", "encoder_layers.2.conv.product", "encoder_layers.2.projection.product",
                           "decoder_layers.0.conv.product", "decoder_layers.3.attention.in_projection.product",
                           "decoder_layers.3.attention.out_projection.product", "decoder_fc3.product"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  for (const auto& name : parameter_names) EXPECT_EQ(name.find("product"), std::string::npos) << name;

  torch::NoGradGuard no_grad;
  at::manual_seed(7);
  const auto source = at::randint(kSpecialSymbolCount, kVocab, {3, 7}, at::kLong);
  const auto lengths = at::tensor({7, 5, 4}, at::kLong);
  auto target = at::randint(kSpecialSymbolCount, kVocab, {3, 6}, at::kLong);
  target.select(1, 0).fill_(kBosId);
  const auto float_logits = model->forward(source, lengths, target);
  QuantizationPlan plan;
  {
    const Calibration calibration(*model, config_of("int8"));
    model->forward(source, lengths, target);
    plan = make_quantization_plan(config_of("int8"), calibration);
  }
  EXPECT_EQ(plan.layers.size(), names.size());
  apply_quantization_plan(*model, plan);
  const auto int8_logits = model->forward(source, lengths, target);
  EXPECT_FALSE(at::equal(int8_logits, float_logits));
  const double spread = float_logits.abs().max().item<double>();
  EXPECT_LT((int8_logits - float_logits).abs().max().item<double>(), 0.05 * spread);
  // Incremental decoding under int8: each step's logits are the whole sequence's at that position,
  // within one step of the output projection's grid (a rounding in a product's float sum may flip).
  const auto fc3 = std::find_if(plan.layers.begin(), plan.layers.end(),
                                [](const LayerQuantizationPlan& l) { return l.name == "decoder_fc3.product"; });
  ASSERT_NE(fc3, plan.layers.end());
  const double output_step = (fc3->output_max - fc3->output_min) / 255;
  auto state = model->start(source, lengths);
  for (int64_t t = 0; t < target.size(1); ++t) {
    const auto step = model->step(*state, target.select(1, t)).logits;  // [B, V]
    EXPECT_LE((step - int8_logits.select(1, t)).abs().max().item<double>(), output_step * 1.001) << "position " << t;
  }
}

}  // namespace
}  // namespace mixseq
