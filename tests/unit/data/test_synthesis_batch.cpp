// Speech-synthesis batches: frames as half the log-mel power of speech_features, floored at the
// magnitude floor; frames back to audio whose frames match; padding and stop-token targets by hand;
// a prepared split read as symbols and frames, with errors naming the manifest line.
#include "mixseq/data/synthesis_batch.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <iostream>

#include "mixseq/audio/audio_file.h"
#include "mixseq/text/synthesis_symbols.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

// A chirp with a little noise: energy in many bins.
std::vector<float> chirp(int64_t n, int64_t rate, uint64_t seed = 1) {
  torch::manual_seed(seed);
  const auto noise = torch::randn({n}) * 0.005;
  std::vector<float> samples(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(rate);
    samples[static_cast<size_t>(i)] =
        0.4f * static_cast<float>(std::sin(2 * M_PI * (200 * t + 900 * t * t))) + noise[i].item<float>();
  }
  return samples;
}

// How far the frames of audio made from `frames` (synthesis_frames_to_audio with `iterations` of
// Griffin-Lim) are from `frames`: the spectral convergence of their magnitudes inside the edges.
double frames_convergence(const std::vector<float>& samples, const torch::Tensor& frames,
                          const SynthesisInputConfig& config, int64_t iterations) {
  GriffinLimOptions griffin_lim;
  griffin_lim.iterations = iterations;
  const auto audio = synthesis_frames_to_audio(frames, config, griffin_lim, at::make_generator<at::CPUGeneratorImpl>(7));
  EXPECT_NEAR(static_cast<double>(audio.size()), static_cast<double>(samples.size()), 256);
  const auto again = synthesis_frames(audio, config);
  const int64_t T = std::min(frames.size(0), again.size(0)) - 2;
  const auto a = torch::exp(frames.narrow(0, 1, T)), b = torch::exp(again.narrow(0, 1, T));
  return ((a - b).norm() / a.norm()).item<double>();
}

TEST(SynthesisFrames, AreHalfTheLogMelPowerFlooredAtTheMagnitudeFloor) {
  SynthesisInputConfig config;  // 22.05 kHz, 1024 / 256, 80 bins
  std::vector<float> samples = chirp(11025, 22050);
  for (size_t i = 4000; i < 6000; ++i) samples[i] = 0.0f;  // silence in the middle: floored frames
  const auto frames = synthesis_frames(samples, config);
  const auto features = speech_features(samples, config.feature_options());
  ASSERT_EQ(frames.sizes(), features.sizes());
  EXPECT_EQ(frames.size(1), 80);
  EXPECT_EQ(frames.size(0), (11025 + 255) / 256);  // ceil(samples / hop), as speech_features keeps
  const auto expected = torch::clamp_min(0.5 * features, std::log(1e-5));
  EXPECT_TRUE(torch::allclose(frames, expected, 0, 1e-6));
  // The silent frames (well inside the gap) sit at ln(1e-5) exactly.
  const double floor = std::log(1e-5);
  EXPECT_NEAR(frames[20].max().item<double>(), floor, 1e-6);
  EXPECT_GT(frames[5].max().item<double>(), floor + 5);
  // The settings: unnormalised log-mel without dither or pre-emphasis, the reference STFT.
  const auto options = config.feature_options();
  EXPECT_EQ(options.window_samples(), 1024);
  EXPECT_EQ(options.hop_samples(), 256);
  EXPECT_FALSE(options.normalize);
  EXPECT_EQ(options.dither, 0.0);
  EXPECT_EQ(options.preemphasis, 0.0);
}

TEST(SynthesisFrames, GoBackToAudioWhoseFramesMatch) {
  SynthesisInputConfig config;
  const std::vector<float> samples = chirp(22050, 22050, 2);
  const auto frames = synthesis_frames(samples, config);
  // The mel magnitudes of the audio made from the frames against the original's.
  const double random_phase = frames_convergence(samples, frames, config, 0);
  const double iterated = frames_convergence(samples, frames, config, 60);
  std::cout << "mel magnitude spectral convergence: random phase " << random_phase << ", 60 Griffin-Lim iterations "
            << iterated << std::endl;
  EXPECT_LT(iterated, 0.3);                 // measured 0.220 (a chirp: its pitch moves within each window)
  EXPECT_LT(iterated, 0.5 * random_phase);
  EXPECT_THROW(synthesis_frames_to_audio(frames.narrow(1, 0, 40), config), Error);
}

TEST(SynthesisFrames, MagnitudeFramesAreTheLogOfGriffinLimsStftFloored) {
  SynthesisInputConfig config;
  config.frames = "magnitude";
  EXPECT_EQ(config.frame_bins(), 513);
  EXPECT_EQ(config.describe_frames(), "513 magnitude bins");
  // A 1 kHz sine: its energy in bin 1000 / (22050 / 1024) = 46.4, i.e. bins 46 and 47.
  std::vector<float> samples(11025);
  for (size_t i = 0; i < samples.size(); ++i)
    samples[i] = 0.5f * static_cast<float>(std::sin(2 * M_PI * 1000.0 * static_cast<double>(i) / 22050.0));
  for (size_t i = 4000; i < 6000; ++i) samples[i] = 0.0f;  // silence in the middle: floored frames
  const auto frames = synthesis_frames(samples, config);
  EXPECT_EQ(frames.sizes(), (std::vector<int64_t>{1 + 11025 / 256, 513}));  // centred frames, as torch.stft's
  // Against LibTorch's own STFT with the same settings (periodic Hann, centred, reflect padding).
  const auto waveform = torch::from_blob(samples.data(), {11025}, torch::kFloat).clone();
  const auto reference = torch::stft(waveform, 1024, 256, 1024, torch::hann_window(1024), /*center=*/true, "reflect",
                                     /*normalized=*/false, /*onesided=*/true, /*return_complex=*/true)
                             .abs();  // [513, T]
  EXPECT_TRUE(torch::allclose(frames, torch::log(reference.t().clamp_min(1e-5)), 1e-5, 1e-4));
  const auto loudest = frames[5].argmax().item<int64_t>();
  EXPECT_TRUE(loudest == 46 || loudest == 47) << loudest;
  EXPECT_NEAR(frames[20].max().item<double>(), std::log(1e-5), 1e-6);  // inside the silence
  EXPECT_THROW(synthesis_frames(std::vector<float>(300, 0.1f), config), Error);  // shorter than n_fft / 2
}

TEST(SynthesisFrames, MagnitudeFramesGoBackToAudioThroughGriffinLimAlone) {
  SynthesisInputConfig config;
  config.frames = "magnitude";
  const std::vector<float> samples = chirp(22050, 22050, 2);
  const auto frames = synthesis_frames(samples, config);
  const double random_phase = frames_convergence(samples, frames, config, 0);
  const double iterated = frames_convergence(samples, frames, config, 60);
  std::cout << "linear magnitude spectral convergence: random phase " << random_phase << ", 60 Griffin-Lim iterations "
            << iterated << std::endl;
  // No filterbank to invert: the magnitudes come back much closer than the mel frames' (0.220).
  EXPECT_LT(iterated, 0.1);  // measured 0.070
  EXPECT_LT(iterated, 0.5 * random_phase);
  EXPECT_THROW(synthesis_frames_to_audio(frames.narrow(1, 0, 80), config), Error);  // mel-sized frames
}

TEST(SynthesisBatch, PadsTextsAndFramesAndMarksTheStopFrames) {
  const std::vector<int64_t> a = {5, 6, 7}, b = {8};
  const auto fa = torch::arange(8, torch::kFloat).view({4, 2}) + 1;  // T 4, F 2
  const auto fb = torch::full({2, 2}, -3.0f);                        // T 2
  const auto batch = make_synthesis_batch({&a, &b}, {&fa, &fb});
  EXPECT_TRUE(torch::equal(batch.text, torch::tensor({5, 6, 7, 8, 0, 0}, torch::kLong).view({2, 3})));
  EXPECT_TRUE(torch::equal(batch.text_lengths, torch::tensor({3, 1}, torch::kLong)));
  EXPECT_TRUE(torch::equal(batch.frame_lengths, torch::tensor({4, 2}, torch::kLong)));
  EXPECT_EQ(batch.total_frames, 6);
  ASSERT_EQ(batch.frames.sizes(), (std::vector<int64_t>{2, 2, 4}));
  EXPECT_TRUE(torch::equal(batch.frames[0], fa.t()));  // [F, T]
  EXPECT_TRUE(torch::equal(batch.frames[1], torch::tensor({-3.0f, -3.0f, 0.0f, 0.0f, -3.0f, -3.0f, 0.0f, 0.0f}).view({2, 4})));
  EXPECT_TRUE(torch::equal(batch.gate, torch::tensor({0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 1.0f, 1.0f}).view({2, 4})));
  const std::vector<int64_t> empty;
  EXPECT_THROW(make_synthesis_batch({&a, &empty}, {&fa, &fb}), Error);
  EXPECT_THROW(make_synthesis_batch({&a}, {&fa, &fb}), Error);
}

TEST(SynthesisSplit, ReadsTranscriptsAsSymbolsAndAudioAsFrames) {
  test::TempDir dir;
  write_wav(dir.path("a.wav"), chirp(8000, 22050, 3), 22050);
  write_wav(dir.path("b.wav"), chirp(15000, 22050, 4), 22050);
  SpeechPrepareOptions options;
  options.manifests["train"] = dir.write("train.tsv", "a.wav\tone two\nb.wav\tnine\n");
  options.out_dir = dir.path("data");
  options.sample_rate = 22050;
  prepare_speech_data(options);
  const SpeechData data(options.out_dir);
  SynthesisInputConfig config;
  const SynthesisSplit split(data.split("train"), "data/train.tsv", config);
  ASSERT_EQ(split.size(), 2);
  EXPECT_EQ(split.text(0), synthesis_symbol_ids("one two", "test"));
  EXPECT_EQ(split.text(1), synthesis_symbol_ids("nine", "test"));
  EXPECT_TRUE(torch::equal(split.frames(1), synthesis_frames(data.split("train").audio(1), config)));
  EXPECT_EQ(split.frame_lengths(), (std::vector<int64_t>{(8000 + 255) / 256, (15000 + 255) / 256}));
  EXPECT_EQ(split.bytes(), (split.frames(0).numel() + split.frames(1).numel()) * 4);
  const auto batch = split.batch({1, 0});
  EXPECT_EQ(batch.frame_lengths[0].item<int64_t>(), split.frame_lengths()[1]);

  // A transcript the synthesis symbols lack: the error names the split's line. Prepared with the
  // characters of the data as symbols, a digit passes prepare but not synthesis.
  options.manifests["train"] = dir.write("digits.tsv", "a.wav\tone\nb.wav\troom 101\n");
  options.out_dir = dir.path("digits");
  options.symbols = "data";
  prepare_speech_data(options);
  const SpeechData digits(options.out_dir);
  try {
    SynthesisSplit(digits.split("train"), "digits/train.tsv", config);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("digits/train.tsv:2: column 6"), std::string::npos) << e.what();
  }
}

TEST(SynthesisInputConfig, ChecksNameTheKey) {
  SynthesisInputConfig config;
  EXPECT_NO_THROW(config.check());
  config.window_ms = 60;  // 1323 samples > n_fft 1024
  try {
    config.check();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("synthesis.window_ms"), std::string::npos) << e.what();
  }
  config = {};
  config.magnitude_floor = 0;
  EXPECT_THROW(config.check(), Error);
  config = {};
  config.guided_attention_weight = -1;
  EXPECT_THROW(config.check(), Error);
  config = {};
  config.frames = "linear";
  try {
    config.check();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("synthesis.frames is 'linear'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mixseq
