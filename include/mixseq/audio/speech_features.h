// Speech features computed with LibTorch, as the reference front ends compute them:
//  - log-mel filterbank (Wave2Letter+, Jasper: NVIDIA DeepLearningExamples' FilterbankFeatures,
//    PyTorch/SpeechRecognition/Jasper/common/features.py): dither, pre-emphasis 0.97, STFT (n_fft 512,
//    a symmetric Hann window of 20 ms (torch.hann_window(320, periodic=False)) zero-padded to n_fft,
//    hop 10 ms, centred with reflect padding as torch.stft(center=True)), power spectrum |X|^2,
//    64 Slaney-normalised mel filters (librosa.filters.mel's defaults: Slaney's mel scale,
//    norm='slaney', fmin 0, fmax sample_rate/2), log(x + 1e-20), then each bin normalised over the
//    utterance's valid frames: (x - mean) / (std + 1e-5), std the unbiased (n - 1) one. The reference
//    keeps ceil(samples / hop) frames ("seq_len"; the STFT's last frame, when samples is a multiple of
//    hop, is left out of the statistics and zeroed): those are the frames returned here;
//  - log spectrogram (DeepSpeech2, MLPerf's loader, retired_benchmarks/never-adopted/speech_recognition
//    data/data_loader.py): librosa.stft with n_fft = window = 20 ms (320 samples, 161 bins), a
//    symmetric Hamming window (scipy.signal.hamming(320)), hop 10 ms, centred with reflect padding
//    (librosa < 0.10's default), log(1 + |X|), then the whole utterance normalised: (x - mean) / std,
//    std the unbiased one, with no guard (an utterance of one constant value gives zeros here where
//    the reference divides 0 by 0). All 1 + samples / hop frames are returned.
// The reference front ends dither in evaluation too (FilterbankFeatures adds the noise whenever its
// dither is > 0); here dither needs a generator, so evaluation is deterministic: pass one to match
// the reference exactly. tests/data/speech_features/make_fixture.py runs both references' code.
// Training adds SpecAugment (frequency and time masks, Park et al. 2019; Jasper's settings as
// defaults), speed perturbation (resampling by a random factor) and vocal tract length perturbation
// (the mel filters' frequencies warped by a random factor, pitch and tempo left as they are).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mixseq {

enum class SpeechFeatureKind {
  kLogMel,          // "log_mel": mel filterbank energies, n_mels bins
  kLogSpectrogram,  // "log_spectrogram": n_fft / 2 + 1 bins
};
std::string speech_feature_kind_name(SpeechFeatureKind kind);
SpeechFeatureKind parse_speech_feature_kind(const std::string& name);  // throws listing the names

// The defaults are Jasper's log-mel settings; SpeechFeatureOptions::deepspeech2() has DeepSpeech2's
// (log_spectrogram wants n_fft 320, the window's length).
struct SpeechFeatureOptions {
  SpeechFeatureKind kind = SpeechFeatureKind::kLogMel;  // log_mel: Hann window; log_spectrogram: Hamming
  int64_t sample_rate = 16000;  // Hz of the samples
  double window_ms = 20.0;      // analysis window
  double hop_ms = 10.0;         // frame shift: one feature frame per hop
  int64_t n_fft = 512;          // FFT size (>= window, which is zero-padded to it in the middle);
                                // log_spectrogram has n_fft / 2 + 1 bins
  int64_t n_mels = 64;          // mel bins (log_mel only)
  double preemphasis = 0.97;    // y[t] = x[t] - k x[t-1] before the STFT (log_mel only); 0 disables
  double dither = 1e-5;         // Gaussian noise of this std added to the samples in training; 0 disables
  bool normalize = true;        // per-utterance normalisation (per bin for log_mel, whole utterance for
                                // log_spectrogram)
  double vtlp_warp = 1.0;       // vocal tract length perturbation (log_mel only): the spectrum's frequencies
                                // scaled by this factor before the mel filters (> 1: as from a shorter vocal
                                // tract), by warping the filters' edges with vtlp_warp_hz(); 1 leaves them be
  // Feature bins of one frame.
  int64_t bins() const { return kind == SpeechFeatureKind::kLogMel ? n_mels : n_fft / 2 + 1; }
  // Samples per hop and per window (rounded to the nearest sample).
  int64_t hop_samples() const;
  int64_t window_samples() const;
  // Frames speech_features() returns for `samples` samples: the centred STFT's 1 + samples / hop for
  // log_spectrogram, Jasper's ceil(samples / hop) for log_mel (see above).
  int64_t frames(int64_t samples) const;
  // The fewest samples speech_features() takes: more than n_fft / 2 (the centred STFT reflects that
  // many at each end), and with normalize, enough for 2 frames (a standard deviation needs 2).
  int64_t min_samples() const;

  // Jasper / Wave2Letter+ (configs/jasper10x5dr_speedp-online_speca.yaml): the defaults above.
  static SpeechFeatureOptions jasper();
  // DeepSpeech2 (MLPerf): log_spectrogram, n_fft 320, no pre-emphasis, no dither.
  static SpeechFeatureOptions deepspeech2();
};

// [n_mels, n_fft / 2 + 1] mel filterbank as librosa.filters.mel(sr, n_fft, n_mels, fmin, fmax) makes it
// (htk=False: Slaney's mel scale, linear below 1 kHz; norm='slaney': each triangle's area is 1 per
// mel band width); f_max 0 means sample_rate / 2. A `warp` other than 1 moves each filter's edges to
// vtlp_warp_hz(edge, warp, f_min, f_max) (the area normalisation follows the moved edges), so that a
// filter made for frequency f hears the input's f / warp: vocal tract length perturbation (Jaitly and
// Hinton 2013), warped as Kaldi's VTLN warps its mel banks.
torch::Tensor mel_filterbank(int64_t sample_rate, int64_t n_fft, int64_t n_mels, double f_min = 0.0,
                             double f_max = 0.0, double warp = 1.0);

// Kaldi's piecewise-linear VTLN warp (MelBanks::VtlnWarpFreq, feat/mel-computations.cc) of `hz` within
// [f_min, f_max], with Kaldi's default cut-offs low = f_min + 100 Hz and high = f_max - 500 Hz: hz / warp
// between l = low * max(1, warp) and h = high * min(1, warp), and straight lines from (f_min, f_min)
// to (l, l / warp) and from (h, h / warp) to (f_max, f_max), so both ends stay where they are.
// Frequencies outside [f_min, f_max] are returned as they are. Throws when the band is too narrow for
// the cut-offs (f_max - f_min must leave l < h) or warp is not in [0.5, 2].
double vtlp_warp_hz(double hz, double warp, double f_min, double f_max);
// The [l, h] in Hz over which vtlp_warp_hz is hz / warp (above); the band fits the warp when l < h.
std::pair<double, double> vtlp_straight_part(double warp, double f_min, double f_max);

// [frames, bins] float features of mono samples. `generator` draws the dither (training); without it
// no dither is added (validation and transcription are deterministic). Throws mixseq::Error when
// there are too few samples for a centred STFT (at most n_fft / 2) or for the statistics (one frame).
torch::Tensor speech_features(const std::vector<float>& samples, const SpeechFeatureOptions& options,
                              c10::optional<at::Generator> generator = c10::nullopt);

struct SpecAugmentOptions {
  int64_t freq_masks = 2;   // frequency masks per utterance; 0 disables
  int64_t max_freq = 20;    // bins of each frequency mask, drawn from [0, max_freq]
  int64_t time_masks = 2;   // time masks per utterance; 0 disables
  int64_t max_time = 75;    // frames of each time mask, drawn from [0, max_time] (not capped by the
                            // utterance's length, as in Jasper's SpecAugment: short ones may be masked whole)
  bool enabled() const { return (freq_masks > 0 && max_freq > 0) || (time_masks > 0 && max_time > 0); }
};

// Zeroes random bands of bins and frames of one utterance's [frames, bins] features in place, drawn
// as Jasper's SpecAugment draws them: width w uniform in [0, max], start uniform in [0, max(1, n - w)).
void spec_augment(torch::Tensor& features, const SpecAugmentOptions& options, at::Generator& generator);

// Speed perturbation: the samples played `factor` times faster (resampled from rate * factor to rate):
// about samples.size() / factor samples, pitch and tempo both scaled (as sox's `speed` effect, which
// Jasper's offline perturbation and its DALI decoder's resampling do).
std::vector<float> change_speed(const std::vector<float>& samples, double factor, int64_t sample_rate);

}  // namespace mixseq
