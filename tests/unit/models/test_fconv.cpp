#include "mixseq/models/fconv.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mixseq/models/registry.h"
#include "mixseq/nn/glu_convolution.h"
#include "mixseq/nn/grad_multiply.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/nn/weight_norm_linear.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"
#include "model_test_support.h"
#include "test_support.h"

namespace mixseq {
namespace {

constexpr int64_t kFconvVocab = 50;

torch::Tensor random_target(const std::vector<int64_t>& lengths) {
  auto target = test::random_tokens(lengths, kFconvVocab);
  target.select(1, 0).fill_(kBosId);
  return target;
}

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// tests/data/fconv/golden.json: fairseq's own FConvEncoder/FConvDecoder (test::small_fconv_config()'s shape,
// make_golden.py beside it says how), its parameters, logits, mean attention and the gradients of
// sum(logits * R). fairseq's name -> ours, and fairseq's position row p + 1 -> our row p (its <pad>
// is 1, positions start at 2; ours 0 and 1).
std::string our_name(std::string name) {
  const std::vector<std::pair<std::string, std::string>> prefixes = {
      {"encoder.embed_tokens.", "encoder_embedding."}, {"encoder.embed_positions.", "encoder_positions."},
      {"encoder.fc1.", "encoder_fc1."},                {"encoder.fc2.", "encoder_fc2."},
      {"encoder.convolutions.", "encoder_layers.#.conv."}, {"encoder.projections.", "encoder_layers.#.projection."},
      {"decoder.embed_tokens.", "decoder_embedding."}, {"decoder.embed_positions.", "decoder_positions."},
      {"decoder.fc1.", "decoder_fc1."},                {"decoder.fc2.", "decoder_fc2."},
      {"decoder.fc3.", "decoder_fc3."},                {"decoder.convolutions.", "decoder_layers.#.conv."},
      {"decoder.projections.", "decoder_layers.#.projection."},
      {"decoder.attention.", "decoder_layers.#.attention."}};
  for (const auto& [theirs, ours] : prefixes) {
    if (name.rfind(theirs, 0) != 0) continue;
    auto rest = name.substr(theirs.size());
    auto mapped = ours;
    if (const auto hash = mapped.find('#'); hash != std::string::npos) {
      const auto dot = rest.find('.');
      mapped.replace(hash, 1, rest.substr(0, dot));
      rest = rest.substr(dot + 1);
    }
    return mapped + rest;
  }
  return "(unmapped) " + name;
}

torch::Tensor golden_tensor(const nlohmann::json& values, const std::vector<int64_t>& shape) {
  return at::tensor(values.get<std::vector<double>>(), at::kDouble).to(at::kFloat).view(shape);
}

// fairseq's position table [P, D] as ours: row p + 1 -> row p, row 0 (<pad>) zero.
torch::Tensor shift_positions(const torch::Tensor& theirs) {
  auto ours = at::zeros_like(theirs);
  ours.slice(0, 1, theirs.size(0) - 1).copy_(theirs.slice(0, 2));
  return ours;
}

TEST(FconvGolden, LogitsAttentionAndGradientsEqualFairseqs) {
  const auto golden = nlohmann::json::parse(test::read_file(MIXSEQ_TEST_DATA_DIR "/fconv/golden.json"));
  const int64_t vocab = golden["vocab"].get<int64_t>();
  FconvModel model(test::small_fconv_config(), vocab);
  auto parameters = model->named_parameters();
  ASSERT_EQ(parameters.size(), golden["parameters"].size());
  std::map<std::string, std::string> theirs_of;
  {
    torch::NoGradGuard no_grad;
    for (const auto& [name, entry] : golden["parameters"].items()) {
      const auto ours = our_name(name);
      ASSERT_TRUE(parameters.contains(ours)) << name << " -> " << ours;
      auto value = golden_tensor(entry["values"], entry["shape"].get<std::vector<int64_t>>());
      if (name.find("embed_positions") != std::string::npos) value = shift_positions(value);
      ASSERT_EQ(parameters[ours].sizes(), value.sizes()) << ours;
      parameters[ours].copy_(value);
      theirs_of[ours] = name;
    }
  }
  model->eval();
  std::vector<torch::Tensor> rows_source, rows_target;
  for (const auto& row : golden["source"]) rows_source.push_back(at::tensor(row.get<std::vector<int64_t>>(), at::kLong));
  for (const auto& row : golden["target_input"]) rows_target.push_back(at::tensor(row.get<std::vector<int64_t>>(), at::kLong));
  const auto sources = at::stack(rows_source), targets = at::stack(rows_target);  // [3, 7], [3, 6]
  const auto lengths = at::full({sources.size(0)}, sources.size(1), at::kLong);
  const auto shape = golden["logits_shape"].get<std::vector<int64_t>>();
  const auto expected = golden_tensor(golden["logits"], shape);
  const auto logits = model(sources, lengths, targets);  // [3, 6, V]
  EXPECT_TRUE(at::allclose(logits, expected, 1e-4, 1e-5)) << (logits - expected).abs().max();

  // The gradients of sum(logits * R), through weight norm, GradMultiply and every residual.
  (logits * golden_tensor(golden["r"], shape)).sum().backward();
  for (const auto& [ours, name] : theirs_of) {
    const auto& entry = golden["parameters"][name];
    auto grad = golden_tensor(entry["grad"], entry["shape"].get<std::vector<int64_t>>());
    if (name.find("embed_positions") != std::string::npos) grad = shift_positions(grad);
    EXPECT_TRUE(at::allclose(parameters[ours].grad(), grad, 1e-4, 1e-5))
        << ours << ": " << (parameters[ours].grad() - grad).abs().max();
  }

  // Step by step, fairseq's logits and attention. fairseq divides the attention layers' sum by
  // the number of decoder layers (4, one without attention), so its rows sum to 3/4; ours by the
  // number of attention layers (3), so that they sum to 1 as the search's coverage penalty expects.
  torch::NoGradGuard no_grad;
  const auto attention =
      golden_tensor(golden["attention"], {shape[0], shape[1], sources.size(1)}) * (4.0 / 3.0);  // [3, 6, 7]
  auto state = model->start(sources, lengths);
  for (int64_t t = 0; t < targets.size(1); ++t) {
    const auto step = model->step(*state, targets.select(1, t));
    EXPECT_TRUE(at::allclose(step.logits, expected.select(1, t), 1e-4, 1e-5)) << "position " << t;
    EXPECT_TRUE(at::allclose(step.attention, attention.select(1, t), 1e-4, 1e-6)) << "position " << t;
  }
}

TEST(Fconv, ParameterCountMatchesFairseq) {
  // ../shared/peers/convs2s_bench.py --arch fconv_iwslt_de_en --vocab 2000 prints params=5484448
  // (FConvModel.build_model, separate source and target embeddings, max positions 1024). By hand,
  // with a weight-normalised linear I -> O holding O*I + O (g) + O (bias):
  //   encoder  embeddings 2000*256 + positions 1024*256                    =   774,144
  //            fc1, fc2: 2 x (256*256 + 2*256)                             =   132,096
  //            4 convolutions: 4 x (3*256*512 + 2*512)                     = 1,576,960
  //   decoder  embeddings + positions, fc1                                 =   840,192
  //            3 convolutions                                              = 1,182,720
  //            3 attentions: 3 x 2 x (256*256 + 2*256)                     =   396,288
  //            fc2 256*256 + 2*256; fc3 2000*256 + 2*2000                  =   582,048
  //   total                                                                = 5,484,448
  EXPECT_EQ(count_parameters(*FconvModel(FconvConfig::iwslt_de_en(), 2000)), 5484448);
  ModelConfig config;
  config.arch = "fconv";
  EXPECT_EQ(count_parameters(*build_seq2seq_model(config, 2000)), 5484448);  // the registry's default is the preset
}

TEST(Fconv, WmtPresetHasFairseqsLayers) {
  const auto config = FconvConfig::wmt_en_de();
  const auto layers = parse_fconv_layers(config.encoder_layers, "k");
  ASSERT_EQ(layers.size(), 15u);
  EXPECT_EQ(layers[8].channels, 512);
  EXPECT_EQ(layers[9].channels, 1024);
  EXPECT_EQ(layers[13].channels, 2048);
  EXPECT_EQ(layers[13].kernel_width, 1);
  EXPECT_EQ(config.decoder_out_embed_dim, 512);
  EXPECT_EQ(config.encoder_embed_dim, 768);
}

TEST(Fconv, ParsesFairseqLayerExpressions) {
  const auto layers = parse_fconv_layers("[(512, 3)] * 2 + [(1024, 5, 0), (7, 1, 2,)] + [(4,2)]*0", "k");
  ASSERT_EQ(layers.size(), 4u);
  EXPECT_EQ(layers[0].channels, 512);
  EXPECT_EQ(layers[0].kernel_width, 3);
  EXPECT_EQ(layers[0].residual, 1);  // fairseq's extend_conv_spec default
  EXPECT_EQ(layers[2].channels, 1024);
  EXPECT_EQ(layers[2].residual, 0);
  EXPECT_EQ(layers[3].residual, 2);
  EXPECT_EQ(parse_fconv_attention("True", 3, "k"), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(parse_fconv_attention("[False, True]", 2, "k"), (std::vector<bool>{false, true}));

  for (const char* bad : {"[(256 3)]", "[(256, 3)] * ", "[(256, 3)] - 1", "(256, 3)", "[(0, 3)]", "[]"}) {
    const auto message = error_of([&] { parse_fconv_layers(bad, "model.fconv.encoder_layers"); });
    EXPECT_NE(message.find("model.fconv.encoder_layers"), std::string::npos) << bad << ": " << message;
  }
  EXPECT_NE(error_of([] { parse_fconv_layers("[(8, 3, 2)]", "model.fconv.decoder_layers"); })
                .find("model.fconv.decoder_layers: layer 1 takes its residual from 2 layers back"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_fconv_attention("[True]", 2, "model.fconv.decoder_attention"); })
                .find("model.fconv.decoder_attention lists 1 flags for 2 decoder layers"),
            std::string::npos);
}

TEST(Fconv, BadConfigValuesNameTheirKeys) {
  auto config = test::small_fconv_config();
  config.share_input_output_embed = true;  // out 6 != embed 12
  EXPECT_NE(error_of([&] { FconvModel(config, kFconvVocab); }).find("model.fconv.share_input_output_embed"),
            std::string::npos);
  config = test::small_fconv_config();
  config.decoder_attention = "False";
  EXPECT_NE(error_of([&] { FconvModel(config, kFconvVocab); }).find("model.fconv.decoder_attention"), std::string::npos);
  config = test::small_fconv_config();
  config.dropout = 1.0;
  EXPECT_NE(error_of([&] { FconvModel(config, kFconvVocab); }).find("model.fconv.dropout"), std::string::npos);
  config = test::small_fconv_config();
  config.encoder_layers = "[(8, 3)] * x";
  EXPECT_NE(error_of([&] { FconvModel(config, kFconvVocab); }).find("model.fconv.encoder_layers"), std::string::npos);
  FconvModel model(test::small_fconv_config(), kFconvVocab);  // 32 positions: sentences up to 31 tokens
  const auto long_source = at::full({1, 32}, 7, at::kLong);
  EXPECT_NE(error_of([&] { model->start(long_source, at::tensor({32}, at::kLong)); }).find("model.fconv.max_positions"),
            std::string::npos);
}

TEST(Fconv, InitialisesAsFairseq) {
  at::manual_seed(1);
  FconvModel model(FconvConfig::iwslt_de_en(), 2000);
  const auto parameters = model->named_parameters();
  const auto& embedding = parameters["encoder_embedding.weight"];
  EXPECT_TRUE(at::equal(embedding[kPadId], at::zeros({256})));
  EXPECT_NEAR(embedding.slice(0, 1).std().item<double>(), 0.1, 0.002);
  EXPECT_TRUE(at::equal(parameters["decoder_positions.weight"][kPadId], at::zeros({256})));
  // fc1 follows dropout 0.2: N(0, sqrt(0.8 / 256)); the attention's projections N(0, sqrt(1 / 256)).
  EXPECT_NEAR(parameters["encoder_fc1.weight_v"].std().item<double>(), std::sqrt(0.8 / 256), 0.002);
  EXPECT_NEAR(parameters["decoder_layers.0.attention.in_projection.weight_v"].std().item<double>(),
              std::sqrt(1.0 / 256), 0.002);
  // Convolutions: N(0, sqrt(4 * 0.8 / (3 * 256))).
  const auto& conv = parameters["encoder_layers.0.conv.weight_v"];
  EXPECT_EQ(conv.sizes(), (at::IntArrayRef{3, 256, 512}));
  EXPECT_NEAR(conv.std().item<double>(), std::sqrt(3.2 / 768), 0.002);
  // weight_norm starts g at ||V||, so that the weight starts equal to V.
  const auto& decoder_conv = *model->named_modules()["decoder_layers.1.conv"]->as<GluConvolutionImpl>();
  EXPECT_TRUE(at::allclose(decoder_conv.weight(), decoder_conv.weight_v, 1e-5, 1e-6));
  EXPECT_TRUE(at::equal(parameters["decoder_fc3.bias"], at::zeros({2000})));
}

// The layer against LibTorch's own composition: conv1d on [B, I, T] with the weight norm written
// out (one norm per output channel over K x I), then glu over the channels.
TEST(Fconv, GluConvolutionEqualsConv1dThenGlu) {
  at::manual_seed(2);
  for (const int64_t kernel : {1, 3, 4}) {
    GluConvolution layer(GluConvolutionOptions{5, 7, kernel, 0.1});
    {
      torch::NoGradGuard no_grad;
      layer->weight_g.uniform_(0.5, 2.0);  // not at ||V||, so that g matters
      layer->bias.normal_();
    }
    const auto x = at::randn({9, 2, 5});  // [T, B, I]
    const auto& v = layer->weight_v;      // [K, I, 2O]
    const auto norms = v.pow(2).sum(at::IntArrayRef{0, 1}, /*keepdim=*/true).sqrt();                 // [1, 1, 2O]
    const auto weight = (v * layer->weight_g / norms).permute({2, 1, 0}).contiguous();  // [2O, I, K]
    for (const int64_t padding : {int64_t{0}, kernel / 2}) {
      const auto expected =
          at::glu(at::conv1d(x.permute({1, 2, 0}), weight, layer->bias, 1, padding), 1).permute({2, 0, 1});
      const auto output = layer(x, padding);  // [T', B, O]
      ASSERT_EQ(output.sizes(), expected.sizes());
      EXPECT_TRUE(at::allclose(output, expected, 1e-5, 1e-6)) << "kernel " << kernel << " padding " << padding;
    }
  }
}

// Forward and every gradient (the input, V, g and the bias) against the same composition, at
// kernel widths 1-4, paddings from none to past the kernel's reach (taps that read no real frame
// for some outputs), on both sides or one, and a single input frame: in fp32 on the CPU the
// layer's convolution and GLU are one node (accumulated products per tap, no padded copy, the gate
// kept), elsewhere one product of the windows then at::glu.
TEST(Fconv, GluConvolutionGradientsEqualConv1dThenGlus) {
  at::manual_seed(4);
  for (const int64_t kernel : {1, 2, 3, 4}) {
    // (left, right): none, centred, the decoder's causal K - 1 and 0, the encoder's even kernels'
    // one more on the right, and past the kernel's reach on one side.
    const std::vector<std::pair<int64_t, int64_t>> paddings{{0, 0},          {kernel / 2, kernel / 2},
                                                            {kernel - 1, 0}, {(kernel - 1) / 2, kernel / 2},
                                                            {0, kernel + 1}, {kernel + 1, 1}};
    for (const auto& [left, right] : paddings) {
      for (const int64_t length : {1, 9}) {
        if (length + left + right < kernel) continue;
        GluConvolution layer(GluConvolutionOptions{5, 7, kernel, 0.1});
        {
          torch::NoGradGuard no_grad;
          layer->weight_g.uniform_(0.5, 2.0);
          layer->bias.normal_();
        }
        const auto x = at::randn({length, 3, 5}).requires_grad_();  // [T, B, I]
        const auto output = left == right ? layer(x, left) : layer->forward_padded(x, left, right);  // [T', B, O]
        const auto r = at::randn(output.sizes());
        (output * r).sum().backward();
        const auto v = layer->weight_v.detach().clone().requires_grad_();
        const auto g = layer->weight_g.detach().clone().requires_grad_();
        const auto b = layer->bias.detach().clone().requires_grad_();
        const auto x2 = x.detach().clone().requires_grad_();
        const auto norms = v.pow(2).sum(at::IntArrayRef{0, 1}, /*keepdim=*/true).sqrt();
        const auto weight = (v * g / norms).permute({2, 1, 0});  // [2O, I, K]
        const auto padded = at::constant_pad_nd(x2, {0, 0, 0, 0, left, right});
        const auto expected = at::glu(at::conv1d(padded.permute({1, 2, 0}), weight, b), 1).permute({2, 0, 1});
        (expected * r).sum().backward();
        const auto where = "kernel " + std::to_string(kernel) + " padding " + std::to_string(left) + ", " +
                           std::to_string(right) + " length " + std::to_string(length);
        ASSERT_EQ(output.sizes(), expected.sizes()) << where;
        EXPECT_TRUE(at::allclose(output, expected, 1e-5, 1e-5)) << where;
        EXPECT_TRUE(at::allclose(x.grad(), x2.grad(), 1e-5, 1e-5)) << where << ": input";
        EXPECT_TRUE(at::allclose(layer->weight_v.grad(), v.grad(), 1e-5, 1e-5)) << where << ": V";
        EXPECT_TRUE(at::allclose(layer->weight_g.grad(), g.grad(), 1e-5, 1e-5)) << where << ": g";
        EXPECT_TRUE(at::allclose(layer->bias.grad(), b.grad(), 1e-5, 1e-5)) << where << ": bias";
      }
    }
  }
}

// Central differences of a double-precision loss against autograd's gradients of g and V.
void expect_gradients_match_finite_differences(torch::nn::Module& module, const std::function<torch::Tensor()>& loss) {
  module.to(at::kDouble);
  module.zero_grad();
  loss().backward();
  for (auto& item : module.named_parameters()) {
    const auto& name = item.key();
    auto& parameter = item.value();
    const auto analytic = parameter.grad().clone();
    torch::NoGradGuard no_grad;
    auto flat = parameter.view(-1);
    for (int64_t i = 0; i < flat.numel(); i += std::max<int64_t>(1, flat.numel() / 17)) {
      const double h = 1e-6, original = flat[i].item<double>();
      flat[i].fill_(original + h);
      const double up = loss().item<double>();
      flat[i].fill_(original - h);
      const double down = loss().item<double>();
      flat[i].fill_(original);
      EXPECT_NEAR(analytic.view(-1)[i].item<double>(), (up - down) / (2 * h), 1e-6) << name << "[" << i << "]";
    }
  }
}

TEST(Fconv, WeightNormGradientsMatchFiniteDifferences) {
  at::manual_seed(3);
  WeightNormLinear linear(WeightNormLinearOptions{6, 4, 0.0});
  {
    torch::NoGradGuard no_grad;
    linear->weight_g.uniform_(0.5, 2.0);
  }
  const auto x = at::randn({3, 6}, at::kDouble), r = at::randn({3, 4}, at::kDouble);
  expect_gradients_match_finite_differences(*linear, [&] { return (linear(x) * r).sum(); });
  // W = g V / ||V|| row by row.
  const auto expected = linear->weight_g * linear->weight_v / linear->weight_v.norm(2, {1}, /*keepdim=*/true);
  EXPECT_TRUE(at::allclose(linear->weight(), expected));

  GluConvolution conv(GluConvolutionOptions{3, 2, 3, 0.0});
  {
    torch::NoGradGuard no_grad;
    conv->weight_g.uniform_(0.5, 2.0);
  }
  const auto y = at::randn({5, 2, 3}, at::kDouble), s = at::randn({5, 2, 2}, at::kDouble);
  expect_gradients_match_finite_differences(*conv, [&] { return (conv(y, 1) * s).sum(); });
}

TEST(Fconv, GradMultiplyScalesOnlyTheGradient) {
  const auto x = at::randn({3, 4}).requires_grad_();
  const auto y = grad_multiply(x, 0.125);
  EXPECT_TRUE(at::equal(y, x));
  (y * 2).sum().backward();
  EXPECT_TRUE(at::allclose(x.grad(), at::full({3, 4}, 0.25)));
}

TEST(Fconv, IncrementalDecodingEqualsFullDecoding) {
  at::manual_seed(4);
  FconvModel model(test::small_fconv_config(), kFconvVocab);
  model->eval();
  const std::vector<int64_t> lengths = {6, 2, 5};
  const auto source = test::random_tokens(lengths, kFconvVocab);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_target({7, 7, 7});

  torch::NoGradGuard no_grad;
  const auto expected = at::log_softmax(model(source, source_lengths, target), -1);  // [3, 7, V]
  auto state = model->start(source, source_lengths);
  const auto mask = dynamic_cast<FconvState&>(*state).pad_mask;
  for (int64_t t = 0; t < target.size(1); ++t) {
    const auto step = model->step(*state, target.select(1, t));
    ASSERT_EQ(step.logits.sizes(), (at::IntArrayRef{3, kFconvVocab}));
    ASSERT_EQ(step.attention.sizes(), (at::IntArrayRef{3, 6}));
    EXPECT_TRUE(at::allclose(at::log_softmax(step.logits, -1), expected.select(1, t), 1e-5, 1e-5)) << "position " << t;
    EXPECT_TRUE(at::allclose(step.attention.sum(-1), at::ones({3}), 1e-5, 1e-6));
    EXPECT_TRUE(at::equal(step.attention.masked_select(mask), at::zeros({mask.sum().item<int64_t>()})));
  }
  // Each convolution keeps K - 1 inputs, whatever the prefix's length: 2, 1, 0 (1x1) and 3 columns.
  const auto& histories = dynamic_cast<FconvState&>(*state).conv_inputs;
  ASSERT_EQ(histories.size(), 4u);
  EXPECT_EQ(histories[0].sizes(), (at::IntArrayRef{2, 3, 8}));
  EXPECT_EQ(histories[1].sizes(), (at::IntArrayRef{1, 3, 8}));
  EXPECT_FALSE(histories[2].defined());
  EXPECT_EQ(histories[3].sizes(), (at::IntArrayRef{3, 3, 10}));
}

TEST(Fconv, StepAfterSelectEqualsForwardOfTheSelectedRows) {
  at::manual_seed(5);
  FconvModel model(test::small_fconv_config(), kFconvVocab);
  model->eval();
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = test::random_tokens(lengths, kFconvVocab);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_target({6, 6, 6});

  torch::NoGradGuard no_grad;
  const auto expected = model(source, source_lengths, target);  // [3, 6, V]
  const auto first_rows = at::tensor({2, 0, 1, 1}, at::kLong);
  const auto second_rows = at::tensor({3, 0, 0, 1}, at::kLong);
  auto rows = at::arange(3, at::kLong);
  auto state = model->start(source, source_lengths);
  for (int64_t t = 0; t < target.size(1); ++t) {
    if (t == 0 || t == 3) {
      const auto& selection = t == 0 ? first_rows : second_rows;
      state->select(selection);
      rows = rows.index_select(0, selection);
    }
    const auto step = model->step(*state, target.select(1, t).index_select(0, rows));
    EXPECT_TRUE(at::allclose(step.logits, expected.select(1, t).index_select(0, rows), 1e-5, 1e-5)) << "position " << t;
  }
}

TEST(Fconv, SelectWithinSourcesEqualsSelect) {
  at::manual_seed(6);
  FconvModel model(test::small_fconv_config(), kFconvVocab);
  model->eval();
  const std::vector<int64_t> lengths = {6, 2, 4};
  const auto source = test::random_tokens(lengths, kFconvVocab);
  const auto source_lengths = at::tensor(lengths, at::kLong);
  const auto target = random_target({4, 4, 4}).repeat_interleave(2, 0);
  test::expect_select_within_sources_equals_select(*model, source, source_lengths, target);
}

// Padding changes nothing: a sentence decodes the same alone as beside a longer one, and target
// padding at the end does not reach the positions before it.
TEST(Fconv, PaddingChangesNothing) {
  at::manual_seed(7);
  FconvModel model(test::small_fconv_config(), kFconvVocab);
  model->eval();
  const auto source = test::random_tokens({7, 3}, kFconvVocab);
  const auto target = random_target({5, 5});
  torch::NoGradGuard no_grad;
  const auto both = model(source, at::tensor({7, 3}, at::kLong), target);                            // [2, 5, V]
  const auto alone = model(source.slice(0, 1, 2).slice(1, 0, 3), at::tensor({3}, at::kLong), target.slice(0, 1, 2));
  EXPECT_TRUE(at::allclose(both.slice(0, 1, 2), alone, 1e-5, 1e-5));
  auto padded_target = target.clone();
  padded_target.select(1, 4).fill_(kPadId);
  const auto padded = model(source, at::tensor({7, 3}, at::kLong), padded_target);
  EXPECT_TRUE(at::allclose(padded.slice(1, 0, 4), both.slice(1, 0, 4), 1e-5, 1e-5));
}

// A decoder position sees no later target token.
TEST(Fconv, DecoderIsCausal) {
  at::manual_seed(8);
  FconvModel model(test::small_fconv_config(), kFconvVocab);
  model->eval();
  const auto source = test::random_tokens({5}, kFconvVocab);
  auto target = random_target({6});
  torch::NoGradGuard no_grad;
  const auto before = model(source, at::tensor({5}, at::kLong), target);
  target[0][4] = (target[0][4].item<int64_t>() + 1 - kSpecialSymbolCount) % (kFconvVocab - kSpecialSymbolCount) +
                 kSpecialSymbolCount;
  const auto after = model(source, at::tensor({5}, at::kLong), target);
  EXPECT_TRUE(at::equal(before.slice(1, 0, 4), after.slice(1, 0, 4)));
  EXPECT_FALSE(at::allclose(before.slice(1, 4), after.slice(1, 4)));
}

TEST(Fconv, SharedOutputEmbeddingIsTheTargetEmbedding) {
  auto config = test::small_fconv_config();
  config.decoder_out_embed_dim = config.decoder_embed_dim;
  config.share_input_output_embed = true;
  FconvModel model(config, kFconvVocab);
  const auto names = model->named_parameters().keys();
  EXPECT_EQ(std::count(names.begin(), names.end(), "decoder_output_bias"), 1);
  EXPECT_EQ(std::count_if(names.begin(), names.end(),
                          [](const std::string& n) { return n.rfind("decoder_fc3", 0) == 0; }),
            0);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto source = test::random_tokens({4}, kFconvVocab);
  EXPECT_EQ(model(source, at::tensor({4}, at::kLong), random_target({3})).sizes(), (at::IntArrayRef{1, 3, kFconvVocab}));
}

// OpenSeq2Seq's shared_embed: one token table and one position table for both sides, the token
// table also the output projection (no bias). Its gradient sums all three uses: finite differences
// on a row only the source uses, one only the target uses, one only the output reaches.
TEST(Fconv, SharedEmbeddingsServeBothSidesAndTheOutput) {
  auto config = test::small_fconv_config();
  config.decoder_out_embed_dim = config.decoder_embed_dim;
  config.dropout = 0.0;
  config.share_all_embeddings = true;
  at::manual_seed(12);
  FconvModel model(config, kFconvVocab);
  const auto names = model->named_parameters().keys();
  const auto count = [&](const std::string& prefix) {
    return std::count_if(names.begin(), names.end(), [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
  };
  EXPECT_EQ(count("embedding.weight"), 1);
  EXPECT_EQ(count("positions.weight"), 1);
  for (const char* absent : {"encoder_embedding", "decoder_embedding", "encoder_positions", "decoder_positions",
                             "decoder_fc3", "decoder_output_bias"})
    EXPECT_EQ(count(absent), 0) << absent;
  // As many parameters as the unshared model less the decoder's own tables and output layer.
  auto unshared_config = config;
  unshared_config.share_all_embeddings = false;
  FconvModel unshared(unshared_config, kFconvVocab);
  int64_t decoder_own = 0;
  for (const auto& item : unshared->named_parameters())
    for (const char* prefix : {"decoder_embedding.", "decoder_positions.", "decoder_fc3."})
      if (item.key().rfind(prefix, 0) == 0) decoder_own += item.value().numel();
  EXPECT_EQ(decoder_own, kFconvVocab * 12 + config.max_positions * 12 + (kFconvVocab * 12 + kFconvVocab + kFconvVocab));  // fc3: V, g, bias
  EXPECT_EQ(count_parameters(*model), count_parameters(*unshared) - decoder_own);

  // The same network unshared (share_input_output_embed, its bias 0, every table a copy of the
  // shared one): the same logits, and the shared tables' gradients are the sums of the copies'.
  // (Finite differences would not do: fairseq scales the gradient into the encoder's output.)
  auto tied_config = config;
  tied_config.share_all_embeddings = false;
  tied_config.share_input_output_embed = true;
  FconvModel tied(tied_config, kFconvVocab);
  model->to(at::kDouble);
  tied->to(at::kDouble);
  auto shared_parameters = model->named_parameters(), tied_parameters = tied->named_parameters();
  {
    torch::NoGradGuard no_grad;
    for (const auto& item : tied_parameters) {
      const auto& name = item.key();
      auto target = item.value();
      if (name == "decoder_output_bias") {
        target.zero_();
      } else if (name == "encoder_embedding.weight" || name == "decoder_embedding.weight") {
        target.copy_(shared_parameters["embedding.weight"]);
      } else if (name == "encoder_positions.weight" || name == "decoder_positions.weight") {
        target.copy_(shared_parameters["positions.weight"]);
      } else {
        target.copy_(shared_parameters[name]);
      }
    }
  }
  const auto source = at::tensor(std::vector<int64_t>{10, 11, 12, 13}, at::kLong).view({1, 4});
  const auto target = at::tensor(std::vector<int64_t>{kBosId, 20, 21}, at::kLong).view({1, 3});
  const auto weights = at::randn({1, 3, kFconvVocab}, at::kDouble);
  const auto shared_logits = model(source, at::tensor({4}, at::kLong), target);
  const auto tied_logits = tied(source, at::tensor({4}, at::kLong), target);
  EXPECT_TRUE(at::allclose(shared_logits, tied_logits, 1e-12, 1e-12));
  (shared_logits * weights).sum().backward();
  (tied_logits * weights).sum().backward();
  const auto table_grad = shared_parameters["embedding.weight"].grad();
  EXPECT_TRUE(at::allclose(table_grad,
                           tied_parameters["encoder_embedding.weight"].grad() +
                               tied_parameters["decoder_embedding.weight"].grad(),
                           1e-10, 1e-12));
  EXPECT_TRUE(at::allclose(shared_parameters["positions.weight"].grad(),
                           tied_parameters["encoder_positions.weight"].grad() +
                               tied_parameters["decoder_positions.weight"].grad(),
                           1e-10, 1e-12));
  // Each use reaches the table: a row only the source uses, one only the target, one only the output.
  for (const int64_t row : {10, 20, 30}) EXPECT_GT(table_grad[row].abs().sum().item<double>(), 0.0) << row;
  EXPECT_GT(tied_parameters["encoder_embedding.weight"].grad()[10].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(tied_parameters["encoder_embedding.weight"].grad()[20].abs().sum().item<double>(), 0.0);

  auto bad = test::small_fconv_config();
  bad.share_all_embeddings = true;  // decoder_out_embed_dim 6, embeddings 12
  EXPECT_NE(error_of([&] { FconvModel(bad, kFconvVocab); }).find("model.fconv.share_all_embeddings"), std::string::npos);
}

TEST(Fconv, OpenSeq2SeqPresetSharesFairseqsWmtLayersAtWidth512) {
  const auto config = FconvConfig::en_de_convs2s();
  EXPECT_EQ(config.encoder_layers, FconvConfig::wmt_en_de().encoder_layers);
  EXPECT_EQ(config.decoder_layers, FconvConfig::wmt_en_de().decoder_layers);
  EXPECT_TRUE(config.share_all_embeddings);
  EXPECT_EQ(config.encoder_embed_dim, 512);
  EXPECT_EQ(config.decoder_out_embed_dim, 512);
  EXPECT_DOUBLE_EQ(config.dropout, 0.2);  // keep probability 0.8
}

TEST(Fconv, TrainsUnderBf16Autocast) {
  at::manual_seed(9);
  FconvModel model(test::small_fconv_config(), kFconvVocab);
  const auto source = test::random_tokens({6, 4}, kFconvVocab);
  const auto target = random_target({5, 5});
  const auto fp32 = model(source, at::tensor({6, 4}, at::kLong), target);
  torch::Tensor bf16;
  {
    test::CpuAutocast autocast;
    model->eval();
    bf16 = model(source, at::tensor({6, 4}, at::kLong), target);
  }
  model->eval();
  const auto reference = model(source, at::tensor({6, 4}, at::kLong), target);
  EXPECT_TRUE(at::allclose(bf16.to(at::kFloat), reference, 0.05, 0.1));
  // In training, gradients reach every parameter (dropout on).
  model->train();
  {
    test::CpuAutocast autocast;
    model(source, at::tensor({6, 4}, at::kLong), target).to(at::kFloat).logsumexp(-1).sum().backward();
  }
  for (const auto& item : model->named_parameters()) {
    const auto& name = item.key();
    const auto& parameter = item.value();
    ASSERT_TRUE(parameter.grad().defined()) << name;
    EXPECT_TRUE(parameter.grad().isfinite().all().item<bool>()) << name;
  }
  EXPECT_TRUE(fp32.isfinite().all().item<bool>());
}

}  // namespace
}  // namespace mixseq
