// Speech batches: feature frames of utterances (audio/speech_features.h), padded into one tensor,
// with their transcripts' symbol ids. In training each utterance may be played at a random speed,
// dithered and SpecAugmented, all drawn from a generator the caller seeds (from the seed, the
// epoch and the batch's place in it), so a resumed run sees exactly the batches it would have.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/audio/audio_file.h"
#include "mixseq/audio/speech_features.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/util/config.h"

namespace mixseq {

// The speech task's input settings (the `speech` section of a training config); a trained model's
// checkpoint keeps them, so transcription computes the very features the model learnt from.
struct SpeechInputConfig {
  int64_t sample_rate = 16000;        // Hz of the audio (the prepared dataset's rate; transcription resamples to it)
  std::string features = "log_mel";   // log_mel (Wave2Letter+, Jasper) or log_spectrogram (DeepSpeech2)
  int64_t n_mels = 64;                // mel bins (log_mel)
  int64_t n_fft = 512;                // FFT size; log_spectrogram has n_fft / 2 + 1 bins (320: 161, DeepSpeech2)
  double window_ms = 20.0;            // analysis window
  double hop_ms = 10.0;               // frame shift
  double preemphasis = 0.97;          // log_mel only; 0 disables
  double dither = 1e-5;               // training only; 0 disables
  bool normalize = true;              // per-utterance normalisation
  int64_t freq_masks = 0;             // SpecAugment in training: frequency masks per utterance; 0 disables
  int64_t max_freq = 20;              //   bins per frequency mask, at most
  int64_t time_masks = 0;             //   time masks per utterance; 0 disables
  int64_t max_time = 75;              //   frames per time mask, at most
  std::vector<double> speed_perturbation;  // [min, max] speed factors drawn uniformly in training; [] = off
  std::vector<double> vtlp;           // [min, max] vocal tract length perturbation: a warp factor drawn uniformly
                                      // for each training utterance (log_mel; within [0.5, 2]; Jaitly and
                                      // Hinton's 0.9-1.1; [a, a] warps every one by a); [] = off
  int64_t max_frames = 12000;         // training batch: utterances x longest utterance's frames
  int64_t max_utterances = 0;         // training batch: utterances; 0 = no limit
  int64_t valid_max_frames = 24000;   // validation batch: utterances x longest utterance's frames
  bool cache_features = false;        // training: compute each utterance's features once, before the first
                                      // update, and keep them in memory (no dither; SpecAugment still drawn
                                      // afresh); cannot be used with speed_perturbation or vtlp
  std::string prefetch = "auto";      // training: make the next update's batches (features, augmentation) on a
                                      // background thread while the current update runs (train/update_prefetch.h):
                                      // true, false, or auto: where a CPU core is left over (a GPU trains, or the
                                      // process may use more cores than its training threads)

  SpeechFeatureOptions feature_options() const;
  // How to read a file for this model: resampled to sample_rate, and refused (naming it) when it
  // holds fewer samples than feature_options() takes.
  AudioReadOptions audio_read_options() const;
  SpecAugmentOptions spec_augment() const;
  void check() const;  // throws naming the speech.* key of a bad value

  void visit(ConfigVisitor& v) {
    v.field("sample_rate", sample_rate, "Hz of the audio; the prepared dataset must have this rate");
    v.choice("features", features, {"log_mel", "log_spectrogram"}, "feature kind");
    v.field("n_mels", n_mels, "mel bins (log_mel)");
    v.field("n_fft", n_fft, "FFT size; log_spectrogram has n_fft / 2 + 1 bins");
    v.field("window_ms", window_ms, "analysis window in milliseconds");
    v.field("hop_ms", hop_ms, "frame shift in milliseconds");
    v.field("preemphasis", preemphasis, "pre-emphasis coefficient (log_mel); 0 disables");
    v.field("dither", dither, "Gaussian dither std in training; 0 disables");
    v.field("normalize", normalize, "per-utterance feature normalisation");
    v.field("freq_masks", freq_masks, "SpecAugment frequency masks per utterance; 0 disables");
    v.field("max_freq", max_freq, "bins per frequency mask, at most");
    v.field("time_masks", time_masks, "SpecAugment time masks per utterance; 0 disables");
    v.field("max_time", max_time, "frames per time mask, at most");
    v.field("speed_perturbation", speed_perturbation, "[min, max] training speed factors; [] = off");
    v.field("vtlp", vtlp, "[min, max] training vocal tract length warp factors (log_mel); [] = off");
    v.field("max_frames", max_frames, "training batch budget: utterances x longest frames");
    v.field("max_utterances", max_utterances, "training batch: utterances at most; 0 = no limit");
    v.field("valid_max_frames", valid_max_frames, "validation batch budget: utterances x longest frames");
    v.field("cache_features", cache_features, "compute features once and keep them in memory (no speed perturbation)");
    v.choice("prefetch", prefetch, {"auto", "true", "false"},
             "make the next update's batches on a background thread while the current one runs; auto: where a "
             "CPU core is left over");
  }
};

struct SpeechBatch {
  torch::Tensor features;   // [B, T, F] fp32, zero past each utterance's length
  torch::Tensor lengths;    // [B] int64 feature frames
  std::vector<std::vector<int64_t>> targets;  // symbol ids of each transcript (empty for transcription)
  int64_t frames = 0;       // sum of lengths
};

// The features of every utterance of a split, computed once without dither (what validation and
// transcription compute) and kept in memory, fp32: 4 bytes x bins x frames (100 frames a second;
// 64 log-mel bins: 92 MB an hour of audio). Immutable once built; read from any thread.
class SpeechFeatureCache {
 public:
  SpeechFeatureCache(const SpeechSplit& split, const SpeechInputConfig& config);
  const torch::Tensor& features(int64_t utterance) const { return features_.at(static_cast<size_t>(utterance)); }
  int64_t bytes() const { return bytes_; }

 private:
  std::vector<torch::Tensor> features_;  // per utterance [T, F]
  int64_t bytes_ = 0;
};

// The features of `audio` (one vector of samples per utterance), the utterances side by side on
// the intra-op threads, one thread each. `training`: each utterance's speed perturbation, VTLP,
// dither and SpecAugment are drawn from a generator of its own, seeded from this one in the
// utterances' order, so the batch is the same whatever the thread count; null: deterministic
// (validation, transcription).
SpeechBatch make_speech_batch(const std::vector<std::vector<float>>& audio, const SpeechInputConfig& config,
                              at::Generator* training);

// The seeds of the generators of a training batch's `count` utterances, drawn from the batch's
// generator in the utterances' order (what make_speech_batch draws first).
std::vector<uint64_t> utterance_seeds(at::Generator& batch, int64_t count);

// The utterances `indices` of a split, with their transcripts. With `cache` (the split's), their
// features come from it, and `training` draws only SpecAugment.
SpeechBatch make_speech_batch(const SpeechSplit& split, const std::vector<int64_t>& indices,
                              const SpeechInputConfig& config, at::Generator* training,
                              const SpeechFeatureCache* cache = nullptr);

// Feature frames of every utterance of a split (before speed perturbation), for batching.
std::vector<int64_t> speech_frame_lengths(const SpeechSplit& split, const SpeechInputConfig& config);

}  // namespace mixseq
