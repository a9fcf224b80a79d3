// Speech batches from a prepared split, with features computed per batch or taken from a
// SpeechFeatureCache (speech.cache_features): the same tensors either way, SpecAugment drawn the
// same from the same generator, the cache never masked, and caching refused with speed perturbation.
#include "mixseq/data/speech_batch.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "mixseq/audio/audio_file.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

// Three utterances of a noisy chirp, 0.4 to 0.9 s at 16 kHz, prepared as a training split.
std::string prepare_split(const test::TempDir& dir) {
  std::string manifest;
  torch::manual_seed(3);
  for (int u = 0; u < 3; ++u) {
    const int64_t n = 6400 + 4000 * u;
    std::vector<float> samples(static_cast<size_t>(n));
    const auto noise = torch::randn({n}) * 0.01;
    for (int64_t i = 0; i < n; ++i)
      samples[static_cast<size_t>(i)] =
          0.3f * static_cast<float>(std::sin(0.02 * i * (1 + 0.0005 * i * (u + 1)))) + noise[i].item<float>();
    const std::string name = "u" + std::to_string(u) + ".wav";
    write_wav(dir.path(name), samples, 16000);
    manifest += name + "\tone two\n";
  }
  SpeechPrepareOptions options;
  options.manifests["train"] = dir.write("train.tsv", manifest);
  options.out_dir = dir.path("data");
  prepare_speech_data(options);
  return options.out_dir;
}

SpeechInputConfig augmented_config() {
  SpeechInputConfig config;
  config.dither = 0;  // the cache has none; on the fly it would be drawn
  config.freq_masks = 2;
  config.max_freq = 6;
  config.time_masks = 2;
  config.max_time = 8;
  return config;
}

TEST(SpeechFeatureCache, GivesTheBatchesComputedOnTheFly) {
  test::TempDir dir;
  const SpeechData data(prepare_split(dir));
  const SpeechSplit& split = data.split("train");
  const SpeechInputConfig config = augmented_config();
  const SpeechFeatureCache cache(split, config);
  EXPECT_EQ(cache.bytes(), (cache.features(0).numel() + cache.features(1).numel() + cache.features(2).numel()) * 4);
  const std::vector<int64_t> indices = {2, 0, 1};

  // Validation and transcription: no randomness.
  const auto fly = make_speech_batch(split, indices, config, nullptr);
  const auto cached = make_speech_batch(split, indices, config, nullptr, &cache);
  EXPECT_TRUE(torch::equal(fly.features, cached.features));
  EXPECT_TRUE(torch::equal(fly.lengths, cached.lengths));
  EXPECT_EQ(fly.frames, cached.frames);
  EXPECT_EQ(fly.targets, cached.targets);

  // Training: the same masks from the same generator, and the cache stays unmasked.
  const torch::Tensor before = cache.features(0).clone();
  auto first = at::make_generator<at::CPUGeneratorImpl>(11), second = at::make_generator<at::CPUGeneratorImpl>(11);
  const auto fly_train = make_speech_batch(split, indices, config, &first);
  const auto cached_train = make_speech_batch(split, indices, config, &second, &cache);
  EXPECT_TRUE(torch::equal(fly_train.features, cached_train.features));
  EXPECT_FALSE(torch::equal(fly_train.features, fly.features)) << "SpecAugment masked nothing";
  EXPECT_TRUE(torch::equal(cache.features(0), before));
}

TEST(SpeechFeatureCache, IsRefusedWithSpeedPerturbation) {
  SpeechInputConfig config = augmented_config();
  config.cache_features = true;
  EXPECT_NO_THROW(config.check());
  config.speed_perturbation = {0.9, 1.1};
  try {
    config.check();
    ADD_FAILURE() << "cache_features with speed perturbation was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("speech.cache_features"), std::string::npos) << e.what();
  }
  config.speed_perturbation = {1.0, 1.0};  // no perturbation at all
  EXPECT_NO_THROW(config.check());
}

}  // namespace
}  // namespace mixseq
