// The speech recognizers: parameter counts equal to the references' at the bench shapes of
// ../shared/peers/asr_bench.py, output lengths, and padding that never changes a shorter
// utterance's outputs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <iostream>
#include <map>

#include "mixseq/criteria/ctc_loss.h"
#include "mixseq/models/conv_ctc.h"
#include "mixseq/models/deepspeech2.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/nn/spectral_conv1d.h"
#include "mixseq/util/error.h"
#include "model_test_support.h"

namespace mixseq {
namespace {

ConvCtcConfig jasper_bench_shape() {  // asr_bench.py --arch jasper --blocks 5 --repeat 1 --channels 256 ...
  ConvCtcConfig c;
  c.channels = {256, 256, 256, 256, 256};
  c.kernels = {11, 13, 17, 21, 25};
  c.dropouts = {0.2, 0.2, 0.2, 0.2, 0.2};
  c.repeat = 1;
  c.epilogue_channels = 256;
  c.enc_feats = 512;
  return c;
}

// max |a - b| over an utterance's valid output frames, relative to a's largest logit in the batch
double valid_frames_error(const CtcOutput& a, const CtcOutput& b, int64_t utterance) {
  const int64_t valid = a.lengths[utterance].item<int64_t>();
  const auto difference = a.logits[utterance].narrow(0, 0, valid) - b.logits[utterance].narrow(0, 0, valid);
  return difference.abs().max().item<double>() / a.logits.abs().max().item<double>();
}

TEST(SpeechModels, JasperParametersEqualTheReferenceAtTheBenchShape) {
  ConvCtcModelImpl model(jasper_bench_shape(), 29);
  EXPECT_EQ(count_parameters(model), 8923677);  // DeepLearningExamples' Jasper, counted by asr_bench.py
}

TEST(SpeechModels, DeepSpeech2ParametersEqualTheReferenceAtTheBenchShape) {
  DeepSpeech2Config c;  // asr_bench.py --arch ds2 --hidden 256 --layers 3 --rnn-type gru
  c.hidden = 256;
  c.layers = 3;
  DeepSpeech2ModelImpl model(c, 29);
  EXPECT_EQ(count_parameters(model), 3266592);  // MLPerf's DeepSpeech2, counted by asr_bench.py
}

TEST(SpeechModels, Wave2LetterPlusLargeHasThePublishedLayout) {
  // 1 + 5 x 3 + 2 convolutions of OpenSeq2Seq's w2lplus_large_8gpus_mp, no residuals.
  ConvCtcConfig c = ConvCtcConfig::wave2letter_plus_large();
  ConvCtcModelImpl model(c, 29);
  int64_t convolutions = 0, residuals = 0;
  for (const auto& item : model.named_parameters()) {
    if (item.key().find("_norm") != std::string::npos || item.key().rfind("decoder", 0) == 0) continue;
    ++convolutions;
    residuals += item.key().find("residual") != std::string::npos;
  }
  EXPECT_EQ(convolutions, 18);
  EXPECT_EQ(residuals, 0);
  // weights: 64*256*11 + 3*(256*256*11) ... as OpenSeq2Seq's layer list gives them, plus batch norms.
  int64_t expected = 64 * 256 * 11 + 2 * 256;
  int64_t in = 256;
  const std::vector<int64_t> channels = {256, 384, 512, 640, 768}, kernels = {11, 13, 17, 21, 25};
  for (size_t b = 0; b < 5; ++b)
    for (int r = 0; r < 3; ++r) {
      expected += (r == 0 ? in : channels[b]) * channels[b] * kernels[b] + 2 * channels[b];
      if (r == 2) in = channels[b];
    }
  expected += 768 * 896 * 29 + 2 * 896 + 896 * 1024 + 2 * 1024 + 1024 * 29 + 29;
  EXPECT_EQ(count_parameters(model), expected);
}

TEST(SpeechModels, ConvCtcHalvesTheFramesAndPaddingDoesNotLeak) {
  torch::manual_seed(3);
  ConvCtcConfig c = jasper_bench_shape();
  c.channels = {16, 16};
  c.kernels = {5, 7};
  c.dropouts = {0.1, 0.1};
  c.prologue_channels = 16;
  c.epilogue_channels = 16;
  c.enc_feats = 32;
  c.in_feats = 8;
  c.residual = "dense";
  ConvCtcModelImpl model(c, 6);
  model.eval();
  const auto x = torch::randn({1, 37, 8});
  const auto alone = model.forward(x, torch::tensor({37}, torch::kLong));
  EXPECT_EQ(alone.logits.sizes(), (std::vector<int64_t>{1, 19, 6}));
  EXPECT_EQ(alone.lengths.item<int64_t>(), 19);
  EXPECT_EQ(model.output_frames(37), 19);
  // The same utterance padded with garbage next to a longer one: its valid outputs are unchanged.
  auto batch = torch::randn({2, 50, 8});
  batch[0].narrow(0, 0, 37).copy_(x[0]);
  const auto padded = model.forward(batch, torch::tensor({37, 50}, torch::kLong));
  EXPECT_EQ(padded.lengths[0].item<int64_t>(), 19);
  EXPECT_EQ(padded.lengths[1].item<int64_t>(), 25);
  EXPECT_TRUE(torch::allclose(padded.logits[0].narrow(0, 0, 19), alone.logits[0], 1e-4, 1e-5));
}

// Inference (eval, no autograd) folds the batch norms, merges residuals and computes the long
// convolutions with FFTs: the same logits as the training graph in eval mode, for every residual
// layout, with padding, and again after the weights change.
TEST(SpeechModels, ConvCtcInferencePathEqualsTheTrainingGraph) {
  for (const std::string residual : {"none", "block", "dense"}) {
    for (const int64_t repeat : {1, 2}) {
      torch::manual_seed(5);
      ConvCtcConfig c = jasper_bench_shape();
      c.channels = {128, 128};
      c.kernels = {13, 25};
      c.dropouts = {0.1, 0.1};
      c.repeat = repeat;
      c.prologue_channels = 128;
      c.epilogue_channels = 128;
      c.epilogue_kernel = 29;
      c.enc_feats = 64;
      c.in_feats = 16;
      c.residual = residual;
      c.activation = repeat == 2 ? "clipped_relu" : "relu";
      auto model = std::make_shared<ConvCtcModelImpl>(c, 7);
      // batch norms with statistics and affine parameters far from the identity
      for (auto& buffer : model->named_buffers()) {
        if (buffer.key().find("running_mean") != std::string::npos) buffer.value().copy_(torch::randn_like(buffer.value()));
        if (buffer.key().find("running_var") != std::string::npos) buffer.value().copy_(torch::rand_like(buffer.value()) + 0.5);
      }
      {
        torch::NoGradGuard no_grad;
        for (auto& parameter : model->named_parameters())
          if (parameter.key().find("norm") != std::string::npos) parameter.value().copy_(torch::randn_like(parameter.value()));
      }
      model->eval();
      const auto x = torch::randn({3, 400, 16});
      const auto lengths = torch::tensor({400, 311, 150}, torch::kLong);
      // the block convolutions at this shape go through FFTs (the 1x1s and the prologue do not)
      ASSERT_GT(spectral_conv1d_fft_size(13, 13, 128, 128), 0);
      ASSERT_GT(spectral_conv1d_fft_size(29, 57, 128, 128), 0);
      for (int round = 0; round < 2; ++round) {
        const auto graph = model->forward(x, lengths);  // autograd on: the training graph
        CtcOutput inferred;
        {
          torch::NoGradGuard no_grad;
          inferred = model->forward(x, lengths);
        }
        ASSERT_TRUE(torch::equal(graph.lengths, inferred.lengths));
        for (int64_t b = 0; b < 3; ++b)
          EXPECT_LT(valid_frames_error(graph, inferred, b), 2e-5)
              << residual << " repeat " << repeat << " round " << round << " utterance " << b;
        // change every weight in place (as an optimizer step would): the next inference must see it
        torch::NoGradGuard no_grad;
        for (auto& parameter : model->parameters()) parameter.mul_(1.1).add_(0.01);
      }
    }
  }
}

TEST(SpeechModels, DeepSpeech2OutputLengthsAndPackedPadding) {
  torch::manual_seed(4);
  DeepSpeech2Config c;
  c.in_feats = 81;
  c.hidden = 12;
  c.layers = 2;
  c.conv_channels = 4;
  DeepSpeech2ModelImpl model(c, 5);
  model.eval();
  EXPECT_EQ(model.output_frames(31), 1);
  EXPECT_EQ(model.output_frames(100), 35);  // (100 - 11) / 2 + 1 - 10
  const auto x = torch::randn({1, 60, 81});
  const auto alone = model.forward(x, torch::tensor({60}, torch::kLong));
  EXPECT_EQ(alone.logits.sizes(), (std::vector<int64_t>{1, model.output_frames(60), 5}));
  // Alone, all lengths are equal and the recurrent layers run unpacked; in a batch with a longer
  // utterance they run packed. The convolutions have no time padding, so the valid output frames
  // see only real input frames, and packing keeps the padding out of the backward direction: the
  // valid outputs are the same either way.
  auto batch = torch::zeros({2, 80, 81});
  batch[0].narrow(0, 0, 60).copy_(x[0]);
  batch[1].copy_(torch::randn({80, 81}));
  const auto together = model.forward(batch, torch::tensor({60, 80}, torch::kLong));
  EXPECT_EQ(together.lengths[0].item<int64_t>(), model.output_frames(60));
  EXPECT_EQ(together.lengths[1].item<int64_t>(), model.output_frames(80));
  EXPECT_TRUE(torch::allclose(together.logits[0].narrow(0, 0, model.output_frames(60)), alone.logits[0], 1e-4, 1e-5));
}

// Inference (eval, autograd off) computes the second convolution with FFTs, its batch norm folded,
// and runs the GRUs through nn/gru_recurrence.h without keeping anything for backward: the same
// logits as the eval-mode graph with autograd on (LibTorch's convolution, the recurrence's
// training path; nn tests compare that with LibTorch's GRU), also after the weights change.
TEST(SpeechModels, DeepSpeech2InferencePathEqualsTheTrainingGraph) {
  torch::manual_seed(8);
  for (const bool sum_directions : {true, false}) {
    DeepSpeech2Config c;
    c.in_feats = 81;
    c.hidden = 24;
    c.layers = 3;
    c.conv_channels = 4;
    c.sum_directions = sum_directions;
    DeepSpeech2ModelImpl model(c, 6);
    // batch norms far from the identity, so that folding them is tested
    for (auto& buffer : model.named_buffers()) {
      if (buffer.key().find("running_mean") != std::string::npos) buffer.value().copy_(torch::randn_like(buffer.value()));
      if (buffer.key().find("running_var") != std::string::npos) buffer.value().copy_(torch::rand_like(buffer.value()) + 0.5);
    }
    model.eval();
    const auto x = torch::randn({3, 90, 81});
    int round = 0;
    for (const auto& lengths : {torch::tensor({90, 90, 90}, torch::kLong), torch::tensor({90, 47, 70}, torch::kLong),
                                torch::tensor({90, 47, 70}, torch::kLong)}) {
      if (round++ == 2) {  // every parameter changed in place, as an optimizer step: the plans must follow
        torch::NoGradGuard no_grad;
        for (auto& parameter : model.parameters()) parameter.mul_(1.1).add_(0.01);
      }
      const auto graph = model.forward(x, lengths);
      CtcOutput inferred;
      {
        torch::NoGradGuard no_grad;
        inferred = model.forward(x, lengths);
      }
      ASSERT_TRUE(torch::equal(graph.lengths, inferred.lengths));
      for (int64_t b = 0; b < 3; ++b)
        EXPECT_LT(valid_frames_error(graph, inferred, b), 1e-5) << sum_directions << " round " << round << " utterance " << b;
    }
  }
}

// AdaBN: every batch norm's statistics become the mean over the adaptation utterances of each
// utterance's own statistics, each layer measured on what the adapted layers before it output
// (normalised by the utterance's statistics, no dropout); no weight moves; the inference path
// (folded batch norms) then uses the new statistics; momentum and modes are restored.
TEST(SpeechModels, AdaptBatchNormsMeasuresEachLayerOnTheAdaptationAudio) {
  torch::manual_seed(11);
  ConvCtcConfig c = jasper_bench_shape();
  c.channels = {12};
  c.kernels = {5};
  c.dropouts = {0.5};
  c.repeat = 1;
  c.residual = "none";
  c.prologue_channels = 10;
  c.prologue_dropout = 0.5;
  c.epilogue_channels = 8;
  c.enc_feats = 8;
  c.in_feats = 6;
  auto model = std::make_shared<ConvCtcModelImpl>(c, 5);
  {
    torch::NoGradGuard no_grad;
    for (auto& parameter : model->named_parameters())
      if (parameter.key().find("norm") != std::string::npos) parameter.value().copy_(torch::randn_like(parameter.value()));
  }
  model->eval();
  // two utterances far from the initial statistics (mean 0, variance 1)
  const std::vector<torch::Tensor> utterances = {torch::randn({1, 37, 6}) * 3 + 2, torch::randn({1, 50, 6}) * 0.5 - 1};
  std::map<std::string, torch::Tensor> before;
  for (const auto& parameter : model->named_parameters()) before[parameter.key()] = parameter.value().clone();
  const auto adapt = [&] {
    return adapt_batch_norms(*model, 2, [&](int64_t i) {
      const auto& x = utterances[static_cast<size_t>(i)];
      return std::make_pair(x, torch::tensor({x.size(1)}, torch::kLong));
    });
  };
  EXPECT_EQ(adapt(), 4);  // prologue, block0, the two epilogue layers

  auto modules = model->named_modules();
  const auto conv = [&](const std::string& name) { return modules[name]->as<torch::nn::Conv1dImpl>(); };
  const auto norm = [&](const std::string& name) { return modules[name]->as<torch::nn::BatchNorm1dImpl>(); };
  torch::Tensor mean_sum = torch::zeros({10}), var_sum = torch::zeros({10});
  torch::Tensor block_mean_sum = torch::zeros({12}), block_var_sum = torch::zeros({12});
  {
    torch::NoGradGuard no_grad;
    for (const auto& x : utterances) {
      const auto out = conv("prologue")->forward(x.transpose(1, 2));  // [1, 10, T']
      const std::vector<int64_t> dims = {0, 2};  // utterance and time: per channel
      const auto mean = out.mean(dims), var = out.var(dims, /*unbiased=*/true);
      mean_sum += mean;
      var_sum += var;
      // the next layer reads the prologue normalised by this utterance's own (biased) statistics
      const auto biased = out.var(dims, /*unbiased=*/false);
      const auto* bn = norm("prologue_norm");
      const auto normalised = (out - mean.view({1, -1, 1})) / (biased.view({1, -1, 1}) + 1e-3).sqrt() *
                                  bn->weight.view({1, -1, 1}) + bn->bias.view({1, -1, 1});
      const auto block = conv("block0_conv0")->forward(torch::relu(normalised));
      block_mean_sum += block.mean(dims);
      block_var_sum += block.var(dims, /*unbiased=*/true);
    }
  }
  EXPECT_TRUE(torch::allclose(norm("prologue_norm")->running_mean, mean_sum / 2, 1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(norm("prologue_norm")->running_var, var_sum / 2, 1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(norm("block0_conv0_norm")->running_mean, block_mean_sum / 2, 1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(norm("block0_conv0_norm")->running_var, block_var_sum / 2, 1e-4, 1e-5));
  for (const auto& parameter : model->named_parameters())
    EXPECT_TRUE(torch::equal(parameter.value(), before[parameter.key()])) << parameter.key();
  for (const auto& module : model->modules()) EXPECT_FALSE(module->is_training());
  EXPECT_EQ(norm("prologue_norm")->options.momentum(), c10::optional<double>(0.1));
  for (const auto& parameter : model->parameters()) EXPECT_TRUE(parameter.requires_grad());

  // no dropout: adapting again measures the same statistics
  const auto first = norm("epilogue1_norm")->running_var.clone();
  adapt();
  EXPECT_TRUE(torch::allclose(norm("epilogue1_norm")->running_var, first, 1e-5, 1e-6));
  // the inference path (folded batch norms) follows the new statistics
  const auto x = torch::randn({2, 40, 6}) * 3 + 2;
  const auto lengths = torch::tensor({40, 29}, torch::kLong);
  const auto graph = model->forward(x, lengths);
  CtcOutput inferred;
  {
    torch::NoGradGuard no_grad;
    inferred = model->forward(x, lengths);
  }
  for (int64_t b = 0; b < 2; ++b) EXPECT_LT(valid_frames_error(graph, inferred, b), 2e-5) << b;

  // a batch that fails half-way (an utterance too short, an unreadable file) leaves the statistics
  // as they were
  std::vector<torch::Tensor> kept;
  for (const auto& buffer : model->buffers()) kept.push_back(buffer.clone());
  EXPECT_THROW(adapt_batch_norms(*model, 2,
                                 [&](int64_t i) -> std::pair<torch::Tensor, torch::Tensor> {
                                   if (i == 1) throw Error("unreadable.wav: not audio");
                                   return {utterances[1] * 5, torch::tensor({50}, torch::kLong)};
                                 }),
               Error);
  size_t k = 0;
  for (const auto& buffer : model->buffers()) EXPECT_TRUE(torch::equal(buffer, kept[k++]));
  EXPECT_EQ(norm("prologue_norm")->options.momentum(), c10::optional<double>(0.1));
  EXPECT_FALSE(model->is_training());

  // DeepSpeech2's 2-D batch norms too: the first one holds its convolution's statistics
  DeepSpeech2Config d;
  d.in_feats = 81;
  d.hidden = 8;
  d.layers = 1;
  d.conv_channels = 3;
  DeepSpeech2ModelImpl ds2(d, 5);
  ds2.train();
  const auto speech = torch::randn({1, 60, 81}) * 2 + 1;
  EXPECT_EQ(adapt_batch_norms(ds2, 1, [&](int64_t) { return std::make_pair(speech, torch::tensor({60}, torch::kLong)); }),
            3);
  EXPECT_TRUE(ds2.is_training());  // the mode it had
  auto ds2_modules = ds2.named_modules("", /*include_self=*/false);
  torch::NoGradGuard no_grad;
  const auto conv1 = ds2_modules["conv1"]->as<torch::nn::Conv2dImpl>()->forward(speech.transpose(1, 2).unsqueeze(1));
  const auto* norm1 = ds2_modules["norm1"]->as<torch::nn::BatchNorm2dImpl>();
  const std::vector<int64_t> dims = {0, 2, 3};  // utterance, frequency and time: per channel
  EXPECT_TRUE(torch::allclose(norm1->running_mean, conv1.mean(dims), 1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(norm1->running_var, conv1.var(dims, /*unbiased=*/true), 1e-4, 1e-5));
}

TEST(SpeechModels, RegistryBuildsEachSpeechArchitectureAndRefusesOtherFamilies) {
  ModelConfig config;
  config.jasper = jasper_bench_shape();
  config.deepspeech2.hidden = 16;
  config.deepspeech2.layers = 1;
  for (const std::string arch : {"jasper", "wave2letter_plus", "deepspeech2"}) {
    config.arch = arch;
    EXPECT_EQ(model_family(arch), kSpeechRecognizerFamily);
    EXPECT_NE(build_speech_recognizer(config, 29), nullptr) << arch;
  }
  config.arch = "transformer";
  try {
    build_speech_recognizer(config, 29);
    FAIL() << "a transformer is not a speech recognizer";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("jasper"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mixseq

namespace mixseq {
namespace {

// bf16 autocast on the CPU trains each speech architecture: forward and backward run (clipped ReLU
// included; LibTorch 1.13 has no bf16 backward for hardtanh) and the CTC loss's gradient points
// where fp32's does.
TEST(SpeechModels, Bf16AutocastTrainsCloseToFp32) {
  ModelConfig config;
  config.wave2letter_plus.channels = {16, 16};
  config.wave2letter_plus.kernels = {5, 7};
  config.wave2letter_plus.dropouts = {0.0, 0.0};
  config.wave2letter_plus.prologue_channels = 16;
  config.wave2letter_plus.epilogue_channels = 16;
  config.wave2letter_plus.enc_feats = 16;
  config.wave2letter_plus.prologue_dropout = config.wave2letter_plus.epilogue_dropout = 0.0;
  config.deepspeech2.hidden = 16;
  config.deepspeech2.layers = 1;
  config.deepspeech2.conv_channels = 4;
  for (const std::string arch : {"wave2letter_plus", "deepspeech2"}) {
    config.arch = arch;
    torch::manual_seed(5);
    auto model = build_speech_recognizer(config, 7);
    const auto x = torch::randn({2, 60, model->feature_bins()});
    const auto lengths = torch::tensor({60, 60}, torch::kLong);
    const std::vector<std::vector<int64_t>> targets = {{1, 2, 3, 4}, {5, 6, 5}};
    const auto gradient_of = [&](bool bf16) {
      model->zero_grad();
      torch::Tensor loss;
      if (bf16) {
        const test::CpuAutocast autocast;
        const auto out = model->forward(x, lengths);
        loss = ctc_loss_sums(out.logits, out.lengths, targets).loss;
      } else {
        const auto out = model->forward(x, lengths);
        loss = ctc_loss_sums(out.logits, out.lengths, targets).loss;
      }
      loss.backward();
      std::vector<torch::Tensor> grads;
      for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
      return torch::cat([&] {
        std::vector<torch::Tensor> flat;
        for (const auto& g : grads) flat.push_back(g.flatten());
        return flat;
      }());
    };
    const auto fp32 = gradient_of(false), bf16 = gradient_of(true);
    EXPECT_TRUE(torch::isfinite(bf16).all().item<bool>()) << arch;
    // bf16 keeps 8 bits of mantissa, and this small random model's gradient passes through five
    // convolutions in it: measured cosines 0.96 (wave2letter_plus) and 0.99+ (deepspeech2).
    const double cosine = (bf16.dot(fp32) / (bf16.norm() * fp32.norm())).item<double>();
    EXPECT_GT(cosine, 0.9) << arch;
    std::cout << arch << ": cosine of the bf16 and fp32 gradients " << cosine << "\n";
  }
}

}  // namespace
}  // namespace mixseq
