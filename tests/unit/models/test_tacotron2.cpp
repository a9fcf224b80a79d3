#include "mixseq/models/tacotron2.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

// ../shared/peers/tts_bench.py's bench shape: --embed-dim 256 --attention-rnn-dim 512
// --decoder-rnn-dim 512 --attention-dim 128 --prenet-dim 128 --postnet-dim 256, the rest their
// defaults (configs/bench/tacotron2.yaml).
Tacotron2Config bench_shape() {
  Tacotron2Config c;
  c.symbols_embedding_dim = c.encoder_embedding_dim = 256;
  c.attention_rnn_dim = 512;
  c.decoder_rnn_dim = 512;
  c.attention_dim = 128;
  c.prenet_dim = 128;
  c.postnet_embedding_dim = 256;
  return c;
}

Tacotron2Config tiny() {
  Tacotron2Config c;
  c.n_mel_channels = 6;
  c.n_symbols = 12;
  c.symbols_embedding_dim = c.encoder_embedding_dim = 8;
  c.attention_rnn_dim = 10;
  c.decoder_rnn_dim = 12;
  c.attention_dim = 5;
  c.attention_location_n_filters = 3;
  c.attention_location_kernel_size = 5;
  c.prenet_dim = 7;
  c.postnet_embedding_dim = 9;
  return c;
}

Tacotron2Config without_dropout(Tacotron2Config c) {
  c.p_attention_dropout = c.p_decoder_dropout = c.prenet_dropout = c.conv_dropout = 0.0;
  return c;
}

// Measured with their own code: sum(p.numel() for p in models.get_model('Tacotron2', ...).parameters()).
TEST(Tacotron2, BenchShapeHasTheReferencesParameterCount) {
  Tacotron2ModelImpl model(bench_shape());
  EXPECT_EQ(count_parameters(model), 7267713);
  // Their parameter layout: the shapes of their model's named_parameters(), in order (printed by
  // their models.get_model at this shape, DeepLearningExamples 729963dd).
  const std::vector<std::vector<int64_t>> reference = {
    {148, 256}, {256, 256, 5}, {256}, {256}, {256}, {256, 256, 5},
    {256}, {256}, {256}, {256, 256, 5}, {256}, {256},
    {256}, {512, 256}, {512, 128}, {512}, {512}, {512, 256},
    {512, 128}, {512}, {512}, {128, 80}, {128, 128}, {2048, 384},
    {2048, 512}, {2048}, {2048}, {128, 512}, {128, 256}, {1, 128},
    {32, 2, 31}, {128, 32}, {2048, 768}, {2048, 512}, {2048}, {2048},
    {80, 768}, {80}, {1, 768}, {1}, {256, 80, 5}, {256},
    {256}, {256}, {256, 256, 5}, {256}, {256}, {256},
    {256, 256, 5}, {256}, {256}, {256}, {256, 256, 5}, {256},
    {256}, {256}, {80, 256, 5}, {80}, {80}, {80},
  };
  const auto parameters = model.named_parameters();
  ASSERT_EQ(parameters.size(), reference.size());
  for (size_t i = 0; i < reference.size(); ++i)
    EXPECT_EQ(parameters[i].value().sizes(), reference[i]) << "parameter " << i << " " << parameters[i].key();
  EXPECT_EQ(model.attention_layer->location_conv->weight.sizes(), (std::vector<int64_t>{32, 2, 31}));
}

TEST(Tacotron2, InitialisationFollowsTheReference) {
  torch::manual_seed(3);
  Tacotron2ModelImpl model(bench_shape());
  // Embedding: uniform in +-sqrt(3) * sqrt(2 / (148 + 256)).
  const double bound = std::sqrt(3.0) * std::sqrt(2.0 / (148 + 256));
  EXPECT_LE(model.embedding->weight.abs().max().item<double>(), bound);
  EXPECT_GT(model.embedding->weight.abs().max().item<double>(), 0.95 * bound);
  // xavier_uniform with gain tanh (5/3) on the query layer: bound gain * sqrt(6 / (512 + 128)).
  const double query_bound = 5.0 / 3.0 * std::sqrt(6.0 / (512 + 128));
  EXPECT_LE(model.attention_layer->query_layer->weight.abs().max().item<double>(), query_bound);
  EXPECT_GT(model.attention_layer->query_layer->weight.abs().max().item<double>(), 0.95 * query_bound);
  // Batch-norm weights uniform in [0, 1) (uniform_initialize_bn_weight).
  const auto& norm = model.postnet->convolutions[0]->as<torch::nn::Sequential>()->ptr(1)->as<torch::nn::BatchNorm1d>();
  EXPECT_GE(norm->weight.min().item<double>(), 0.0);
  EXPECT_LT(norm->weight.max().item<double>(), 1.0);
  EXPECT_LT(norm->weight.mean().item<double>(), 0.7);  // not LibTorch's ones
}

TEST(Tacotron2, TeacherForcedStepsEqualTheFreeRunningStepFunction) {
  torch::manual_seed(5);
  Tacotron2ModelImpl model(without_dropout(tiny()));
  model.eval();
  const auto text = torch::randint(1, 12, {2, 7}, torch::kLong);
  const auto lengths = torch::tensor(std::vector<int64_t>{7, 4});
  const auto frames = torch::randn({2, 6, 9});  // [B, F, T]
  const auto output = model.forward(text, lengths, frames);
  ASSERT_EQ(output.frames.sizes(), (std::vector<int64_t>{2, 6, 9}));
  ASSERT_EQ(output.gate_logits.sizes(), (std::vector<int64_t>{2, 9}));
  ASSERT_EQ(output.alignments.sizes(), (std::vector<int64_t>{2, 9, 7}));

  auto state = model.start(model.encode(text, lengths), lengths);
  auto previous = torch::zeros({2, 6});
  for (int64_t t = 0; t < 9; ++t) {
    const auto step = model.step(previous, state);
    EXPECT_TRUE(torch::allclose(step.frame, output.frames.select(2, t), 1e-5, 1e-6)) << "step " << t;
    EXPECT_TRUE(torch::allclose(step.gate, output.gate_logits.select(1, t), 1e-5, 1e-6)) << "step " << t;
    EXPECT_TRUE(torch::allclose(step.weights, output.alignments.select(1, t), 1e-5, 1e-6)) << "step " << t;
    previous = frames.select(2, t);
  }
  // Attention never reaches past the second text's 4 symbols, and each step's weights sum to 1.
  EXPECT_EQ(output.alignments[1].slice(1, 4).abs().max().item<float>(), 0.0f);
  EXPECT_TRUE(torch::allclose(output.alignments.sum(2), torch::ones({2, 9}), 1e-5, 1e-6));
  // Free-running inference is the same step function fed its own frames.
  SynthesisOptions options;
  options.max_steps = 5;
  options.early_stop = false;
  const auto synthesis = model.infer(text, lengths, options);
  state = model.start(model.encode(text, lengths), lengths);
  previous = torch::zeros({2, 6});
  std::vector<torch::Tensor> own;
  for (int t = 0; t < 5; ++t) {
    previous = model.step(previous, state).frame;
    own.push_back(previous);
  }
  const auto expected = model.postnet_frames(torch::stack(own, 2));
  EXPECT_TRUE(torch::allclose(synthesis.frames, expected, 1e-5, 1e-6));
  // Without autograd, batch-1 synthesis takes the gemv path (nn/matrix_vector_cell.h): same frames.
  torch::NoGradGuard no_grad;
  const auto one = model.infer(text.slice(0, 0, 1), lengths.slice(0, 0, 1), options);
  EXPECT_TRUE(torch::allclose(one.frames, synthesis.frames.slice(0, 0, 1), 1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(one.alignments, synthesis.alignments.slice(0, 0, 1), 1e-4, 1e-5));
}

// Teacher forcing makes each decoder LSTM weight's gradient once for all steps
// (nn/recurrent_linear.h) and projects all steps at once: every parameter's gradient equals that
// of their Decoder.forward written step by step with LibTorch's lstm_cell and linear.
TEST(Tacotron2, TeacherForcedGradientsEqualLibTorchsStepByStepDecoder) {
  torch::manual_seed(9);
  Tacotron2ModelImpl model(without_dropout(tiny()));
  model.eval();
  const auto text = torch::randint(1, 12, {2, 7}, torch::kLong);
  const auto lengths = torch::tensor(std::vector<int64_t>{7, 4});
  const auto frames = torch::randn({2, 6, 9});  // [B, F, T]
  const auto probe_frames = torch::randn({2, 6, 9}), probe_postnet = torch::randn({2, 6, 9});
  const auto probe_gates = torch::randn({2, 9}), probe_alignments = torch::randn({2, 9, 7});
  const auto loss_of = [&](const SynthesisOutput& o) {
    return (o.frames * probe_frames).sum() + (o.frames_postnet * probe_postnet).sum() +
           (o.gate_logits * probe_gates).sum() + (o.alignments * probe_alignments).sum();
  };
  const auto parameters = model.named_parameters();
  const auto gradients = [&](const torch::Tensor& loss) {
    for (auto& p : model.parameters()) p.mutable_grad() = torch::Tensor();
    loss.backward();
    std::vector<torch::Tensor> grads;
    for (const auto& p : parameters) grads.push_back(p.value().grad().clone());
    return grads;
  };
  const auto ours = gradients(loss_of(model.forward(text, lengths, frames)));

  // Their Decoder.forward, one step at a time.
  auto state = model.start(model.encode(text, lengths), lengths);
  auto inputs = frames.permute({2, 0, 1});
  inputs = torch::cat({torch::zeros_like(inputs.slice(0, 0, 1)), inputs.slice(0, 0, 8)});
  const auto prenet_outputs = model.prenet(inputs);
  std::vector<torch::Tensor> out_frames, gates, alignments;
  for (int64_t t = 0; t < 9; ++t) {
    auto& s = state;
    std::tie(s.attention_hidden, s.attention_cell) =
        torch::lstm_cell(torch::cat({prenet_outputs[t], s.attention_context}, -1), {s.attention_hidden, s.attention_cell},
                         model.attention_rnn->weight_ih, model.attention_rnn->weight_hh, model.attention_rnn->bias_ih,
                         model.attention_rnn->bias_hh);
    auto [context, weights] = model.attention_layer(s.attention_hidden, s.memory, s.processed_memory,
                                                    torch::stack({s.attention_weights, s.attention_weights_cum}, 1),
                                                    s.pad_mask);
    s.attention_weights = weights;
    s.attention_weights_cum = s.attention_weights_cum + weights;
    s.attention_context = context;
    std::tie(s.decoder_hidden, s.decoder_cell) =
        torch::lstm_cell(torch::cat({s.attention_hidden, context}, -1), {s.decoder_hidden, s.decoder_cell},
                         model.decoder_rnn->weight_ih, model.decoder_rnn->weight_hh, model.decoder_rnn->bias_ih,
                         model.decoder_rnn->bias_hh);
    const auto hidden_context = torch::cat({s.decoder_hidden, context}, 1);
    out_frames.push_back(model.linear_projection(hidden_context));
    gates.push_back(model.gate_layer(hidden_context).squeeze(1));
    alignments.push_back(weights);
  }
  SynthesisOutput reference;
  reference.frames = torch::stack(out_frames, 2);
  reference.gate_logits = torch::stack(gates, 1);
  reference.alignments = torch::stack(alignments, 1);
  reference.frames_postnet = model.postnet_frames(reference.frames);
  const auto theirs = gradients(loss_of(reference));

  ASSERT_EQ(ours.size(), theirs.size());
  size_t i = 0;
  for (const auto& p : parameters) {
    const double scale = std::max(1.0, theirs[i].abs().max().item<double>());
    EXPECT_LT((ours[i] - theirs[i]).abs().max().item<double>(), 1e-5 * scale) << p.key();
    ++i;
  }
  EXPECT_GT(parameters["decoder_rnn.weight_ih"].grad().abs().max().item<double>(), 0.0);
}

TEST(Tacotron2, StopTokenEndsSynthesis) {
  torch::manual_seed(7);
  Tacotron2ModelImpl model(tiny());
  model.eval();
  torch::NoGradGuard no_grad;
  const auto text = torch::randint(1, 12, {2, 5}, torch::kLong);
  const auto lengths = torch::tensor(std::vector<int64_t>{5, 3});
  SynthesisOptions options;
  options.max_steps = 40;
  model.gate_layer->bias.fill_(100.0);  // sigmoid(gate) ~ 1 > 0.5 at the first step
  auto synthesis = model.infer(text, lengths, options);
  EXPECT_EQ(synthesis.frames.size(2), 1);
  EXPECT_EQ(synthesis.lengths.abs().sum().item<int64_t>(), 0);  // no frame before the stop token
  options.early_stop = false;  // benchmarks: always max_steps
  EXPECT_EQ(model.infer(text, lengths, options).frames.size(2), 40);
  options.early_stop = true;
  model.gate_layer->bias.fill_(-100.0);  // never stops: max_steps
  synthesis = model.infer(text, lengths, options);
  EXPECT_EQ(synthesis.frames.size(2), 40);
  EXPECT_EQ(synthesis.lengths[0].item<int64_t>(), 40);
  EXPECT_EQ(synthesis.alignments.sizes(), (std::vector<int64_t>{2, 40, 5}));
}

// initialize_output_bias: with the projection's weights zeroed, every decoder frame is the given
// mean and every stop logit the given one; the postnet then adds its residual.
TEST(Tacotron2, OutputBiasSetsTheFramesAndStopLogitOfAnEmptyProjection) {
  torch::manual_seed(8);
  Tacotron2ModelImpl model(tiny());
  const auto mean = torch::linspace(-9, -4, 6);
  model.initialize_output_bias(mean, -3.5);
  {
    torch::NoGradGuard no_grad;
    model.linear_projection->weight.zero_();
    model.gate_layer->weight.zero_();
  }
  const auto text = torch::randint(1, 12, {2, 5}, torch::kLong);
  const auto lengths = torch::tensor(std::vector<int64_t>{5, 3});
  const auto out = model.forward(text, lengths, torch::randn({2, 6, 7}));
  EXPECT_TRUE(torch::allclose(out.frames, mean.view({1, 6, 1}).expand({2, 6, 7})));
  EXPECT_TRUE(torch::allclose(out.gate_logits, torch::full({2, 7}, -3.5)));
  EXPECT_THROW(model.initialize_output_bias(torch::zeros({5}), 0.0), Error);
}

TEST(Tacotron2, RegistryBuildsItAsASpeechSynthesizer) {
  ModelConfig config;
  config.arch = "tacotron2";
  config.tacotron2 = tiny();
  EXPECT_EQ(model_family("tacotron2"), kSpeechSynthesizerFamily);
  const auto model = build_speech_synthesizer(config, 0);
  EXPECT_EQ(model->symbols(), 12);
  EXPECT_EQ(model->frame_bins(), 6);
  EXPECT_EQ(build_speech_synthesizer(config, 30)->symbols(), 30);
  const std::string wrong = test::error_of([&] { build_speech_recognizer(config, 10); });
  EXPECT_NE(wrong.find("speech synthesizer"), std::string::npos) << wrong;
  config.tacotron2.encoder_embedding_dim = 10;
  const std::string message = test::error_of([&] { build_speech_synthesizer(config, 0); });
  EXPECT_NE(message.find("must equal model.tacotron2.encoder_embedding_dim"), std::string::npos) << message;
}

}  // namespace
}  // namespace mixseq
