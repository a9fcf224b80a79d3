#include "mixseq/data/speech_batch.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>

#include "mixseq/audio/speech_features.h"
#include "mixseq/util/error.h"
#include "stft_settings.h"

namespace mixseq {

SpeechFeatureOptions SpeechInputConfig::feature_options() const {
  SpeechFeatureOptions options;
  options.kind = parse_speech_feature_kind(features);
  options.sample_rate = sample_rate;
  options.window_ms = window_ms;
  options.hop_ms = hop_ms;
  options.n_fft = n_fft;
  options.n_mels = n_mels;
  options.preemphasis = preemphasis;
  options.dither = dither;
  options.normalize = normalize;
  return options;
}

AudioReadOptions SpeechInputConfig::audio_read_options() const {
  AudioReadOptions options;
  options.sample_rate = sample_rate;
  options.min_samples = feature_options().min_samples();
  return options;
}

SpecAugmentOptions SpeechInputConfig::spec_augment() const {
  SpecAugmentOptions options;
  options.freq_masks = freq_masks;
  options.max_freq = max_freq;
  options.time_masks = time_masks;
  options.max_time = max_time;
  return options;
}

void SpeechInputConfig::check() const {
  check_stft_settings("speech", sample_rate, n_mels, n_fft, window_ms, hop_ms);
  MIXSEQ_CHECK(dither >= 0 && preemphasis >= 0 && preemphasis < 1, "speech.dither (", dither,
               ") must be >= 0 and speech.preemphasis (", preemphasis, ") in [0, 1)");
  MIXSEQ_CHECK(freq_masks >= 0 && max_freq >= 0 && time_masks >= 0 && max_time >= 0,
               "speech.freq_masks, max_freq, time_masks and max_time must be >= 0");
  MIXSEQ_CHECK(speed_perturbation.empty() ||
                   (speed_perturbation.size() == 2 && speed_perturbation[0] > 0 &&
                    speed_perturbation[0] <= speed_perturbation[1]),
               "speech.speed_perturbation must be [] or [min, max] with 0 < min <= max");
  MIXSEQ_CHECK(!cache_features || speed_perturbation.empty() || speed_perturbation[0] == speed_perturbation[1],
               "speech.cache_features keeps one rendering of each utterance, but speech.speed_perturbation needs a "
               "new one for every batch; turn one of them off");
  MIXSEQ_CHECK(vtlp.empty() || (vtlp.size() == 2 && vtlp[0] >= 0.5 && vtlp[0] <= vtlp[1] && vtlp[1] <= 2.0),
               "speech.vtlp must be [] or [min, max] with 0.5 <= min <= max <= 2");
  MIXSEQ_CHECK(vtlp.empty() || features == "log_mel", "speech.vtlp warps the mel filters, but speech.features is ",
               features, ", which has none");
  MIXSEQ_CHECK(!cache_features || vtlp.empty(),
               "speech.cache_features keeps one rendering of each utterance, but speech.vtlp needs a new one for every "
               "batch; turn one of them off");
  for (const double warp : vtlp) {  // the filters' band is [0, sample_rate / 2]
    const auto [low, high] = vtlp_straight_part(warp, 0.0, sample_rate / 2.0);
    MIXSEQ_CHECK(low < high, "speech.vtlp: warp ", warp, " needs a wider band than speech.sample_rate ", sample_rate,
                 " Hz gives (its straight part would run from ", low, " to ", high,
                 " Hz; the warp bends at 100 Hz and at sample_rate / 2 - 500 Hz)");
  }
  MIXSEQ_CHECK(max_frames >= 1 && valid_max_frames >= 1 && max_utterances >= 0, "speech.max_frames (", max_frames,
               ") and speech.valid_max_frames (", valid_max_frames, ") must be positive, speech.max_utterances (",
               max_utterances, ") >= 0");
}

namespace {

// Features [T, F] per utterance, zero-padded into one [B, T_max, F] batch.
SpeechBatch pad_into_batch(const std::vector<torch::Tensor>& features, int64_t bins) {
  SpeechBatch batch;
  int64_t longest = 1;
  for (const auto& f : features) longest = std::max(longest, f.size(0));
  batch.features = torch::zeros({static_cast<int64_t>(features.size()), longest, bins});
  std::vector<int64_t> lengths;
  for (size_t b = 0; b < features.size(); ++b) {
    batch.features[static_cast<int64_t>(b)].narrow(0, 0, features[b].size(0)).copy_(features[b]);
    lengths.push_back(features[b].size(0));
    batch.frames += features[b].size(0);
  }
  batch.lengths = torch::tensor(lengths, torch::kLong);
  return batch;
}

}  // namespace

SpeechFeatureCache::SpeechFeatureCache(const SpeechSplit& split, const SpeechInputConfig& config) {
  SpeechFeatureOptions options = config.feature_options();
  options.dither = 0;
  features_.resize(static_cast<size_t>(split.size()));
  at::parallel_for(0, split.size(), 1, [&](int64_t begin, int64_t end) {  // as make_speech_batch
    for (int64_t i = begin; i < end; ++i) features_[static_cast<size_t>(i)] = speech_features(split.audio(i), options);
  });
  for (const auto& f : features_) bytes_ += f.numel() * static_cast<int64_t>(sizeof(float));
}

namespace {

// One utterance's features; `training`: its own generator for speed perturbation, VTLP, dither and
// SpecAugment, in that order.
torch::Tensor utterance_features(const std::vector<float>& samples, const SpeechInputConfig& config,
                                 const SpeechFeatureOptions& options, const SpecAugmentOptions& augment,
                                 at::Generator* training) {
  if (training == nullptr) {
    SpeechFeatureOptions deterministic = options;
    deterministic.dither = 0;
    return speech_features(samples, deterministic);
  }
  const std::vector<float>* input = &samples;
  std::vector<float> perturbed;
  if (!config.speed_perturbation.empty() && config.speed_perturbation[0] != config.speed_perturbation[1]) {
    const double u = torch::rand({1}, *training).item<double>();
    const double factor = config.speed_perturbation[0] + u * (config.speed_perturbation[1] - config.speed_perturbation[0]);
    perturbed = change_speed(samples, factor, config.sample_rate);
    input = &perturbed;
  }
  SpeechFeatureOptions drawn = options;
  if (!config.vtlp.empty()) {
    const double u = config.vtlp[0] == config.vtlp[1] ? 0.0 : torch::rand({1}, *training).item<double>();
    drawn.vtlp_warp = config.vtlp[0] + u * (config.vtlp[1] - config.vtlp[0]);
  }
  torch::Tensor f = speech_features(*input, drawn, *training);
  if (augment.enabled()) spec_augment(f, augment, *training);
  return f;
}

}  // namespace

std::vector<uint64_t> utterance_seeds(at::Generator& batch, int64_t count) {
  if (count <= 0) return {};
  const auto drawn = torch::randint(0, std::numeric_limits<int64_t>::max(), {count}, batch, torch::kLong);
  return std::vector<uint64_t>(drawn.data_ptr<int64_t>(), drawn.data_ptr<int64_t>() + count);
}

SpeechBatch make_speech_batch(const std::vector<std::vector<float>>& audio, const SpeechInputConfig& config,
                              at::Generator* training) {
  const SpeechFeatureOptions options = config.feature_options();
  const SpecAugmentOptions augment = config.spec_augment();
  const auto count = static_cast<int64_t>(audio.size());
  const std::vector<uint64_t> seeds = training != nullptr ? utterance_seeds(*training, count) : std::vector<uint64_t>{};
  // One utterance per task, each computed on one thread (nested LibTorch operations run serially
  // inside a parallel region): a feature's operations on one utterance are too small to split.
  std::vector<torch::Tensor> features(audio.size());
  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto u = static_cast<size_t>(i);
      if (training == nullptr) {
        features[u] = utterance_features(audio[u], config, options, augment, nullptr);
      } else {
        at::Generator own = at::make_generator<at::CPUGeneratorImpl>(seeds[u]);
        features[u] = utterance_features(audio[u], config, options, augment, &own);
      }
    }
  });
  return pad_into_batch(features, options.bins());
}

SpeechBatch make_speech_batch(const SpeechSplit& split, const std::vector<int64_t>& indices,
                              const SpeechInputConfig& config, at::Generator* training,
                              const SpeechFeatureCache* cache) {
  SpeechBatch batch;
  if (cache != nullptr) {
    const SpecAugmentOptions augment = config.spec_augment();
    const auto count = static_cast<int64_t>(indices.size());
    const std::vector<uint64_t> seeds = training != nullptr ? utterance_seeds(*training, count) : std::vector<uint64_t>{};
    std::vector<torch::Tensor> features;
    for (int64_t u = 0; u < count; ++u) {
      torch::Tensor f = cache->features(indices[static_cast<size_t>(u)]);
      if (training != nullptr && augment.enabled()) {  // drawn as make_speech_batch draws it
        f = f.clone();  // the masks must not reach the cache
        at::Generator own = at::make_generator<at::CPUGeneratorImpl>(seeds[static_cast<size_t>(u)]);
        spec_augment(f, augment, own);
      }
      features.push_back(f);
    }
    batch = pad_into_batch(features, config.feature_options().bins());
  } else {
    std::vector<std::vector<float>> audio;
    for (const int64_t i : indices) audio.push_back(split.audio(i));
    batch = make_speech_batch(audio, config, training);
  }
  for (const int64_t i : indices) batch.targets.push_back(split.symbol_ids(i));
  return batch;
}

std::vector<int64_t> speech_frame_lengths(const SpeechSplit& split, const SpeechInputConfig& config) {
  const SpeechFeatureOptions options = config.feature_options();
  std::vector<int64_t> frames;
  for (int64_t i = 0; i < split.size(); ++i) frames.push_back(options.frames(split.samples(i)));
  return frames;
}

}  // namespace mixseq
