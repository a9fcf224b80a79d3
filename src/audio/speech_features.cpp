#include "mixseq/audio/speech_features.h"

#include <ATen/ATen.h>

#include <cmath>

#include "mixseq/audio/audio_file.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Slaney's mel scale (librosa.hz_to_mel / mel_to_hz with htk=False): linear, 200/3 Hz a mel, below
// 1 kHz; logarithmic above, 27 mels for each factor of 6.4.
constexpr double kMelLinearHz = 200.0 / 3.0;
constexpr double kMelLogStartHz = 1000.0;
constexpr double kMelLogStart = kMelLogStartHz / kMelLinearHz;  // 15 mels
const double kMelLogStep = std::log(6.4) / 27.0;

double hz_to_mel(double hz) {
  return hz >= kMelLogStartHz ? kMelLogStart + std::log(hz / kMelLogStartHz) / kMelLogStep : hz / kMelLinearHz;
}

double mel_to_hz(double mel) {
  return mel >= kMelLogStart ? kMelLogStartHz * std::exp(kMelLogStep * (mel - kMelLogStart)) : mel * kMelLinearHz;
}

void check_options(const SpeechFeatureOptions& o) {
  MIXSEQ_CHECK(o.sample_rate > 0, "speech features: sample_rate must be > 0, not ", o.sample_rate);
  MIXSEQ_CHECK(o.hop_samples() >= 1, "speech features: hop_ms ", o.hop_ms, " is less than one sample at ",
               o.sample_rate, " Hz");
  MIXSEQ_CHECK(o.window_samples() >= 1 && o.window_samples() <= o.n_fft, "speech features: the window (",
               o.window_ms, " ms = ", o.window_samples(), " samples) must fit in n_fft (", o.n_fft,
               "); DeepSpeech2's log_spectrogram uses n_fft 320 = its window (SpeechFeatureOptions::deepspeech2())");
  MIXSEQ_CHECK(o.kind != SpeechFeatureKind::kLogMel || o.n_mels >= 1, "speech features: n_mels must be >= 1, not ",
               o.n_mels);
  MIXSEQ_CHECK(o.dither >= 0.0, "speech features: dither must be >= 0, not ", o.dither);
  MIXSEQ_CHECK(o.vtlp_warp == 1.0 || o.kind == SpeechFeatureKind::kLogMel,
               "speech features: vocal tract length perturbation warps mel filters; log_spectrogram has none");
}

// (x - mean) / (std + eps) over `dim` (all when dim is nullopt), std with Bessel's correction as
// torch.Tensor.std() computes it in both references.
torch::Tensor normalize(const torch::Tensor& x, c10::optional<int64_t> dim, double eps) {
  if (dim) {
    const auto mean = x.mean(*dim, /*keepdim=*/true);
    const auto std = x.std(*dim, /*unbiased=*/true, /*keepdim=*/true);
    return (x - mean) / (std + eps);
  }
  const auto mean = x.mean();
  auto std = x.std(/*unbiased=*/true);
  // The DS2 loader divides by std unguarded: an utterance of one value would be 0 / 0 there.
  if (std.item<double>() == 0.0) std = torch::ones_like(std);
  return (x - mean) / (std + eps);
}

}  // namespace

std::string speech_feature_kind_name(SpeechFeatureKind kind) {
  return kind == SpeechFeatureKind::kLogMel ? "log_mel" : "log_spectrogram";
}

SpeechFeatureKind parse_speech_feature_kind(const std::string& name) {
  if (name == "log_mel") return SpeechFeatureKind::kLogMel;
  if (name == "log_spectrogram") return SpeechFeatureKind::kLogSpectrogram;
  throw Error(str_cat("unknown speech feature kind '", name, "'; known: log_mel, log_spectrogram"));
}

// int(sample_rate * window_stride) in both references; rounded here, so that 16000 * 0.01 is 160
// whatever the last bit of the product.
int64_t SpeechFeatureOptions::hop_samples() const {
  return static_cast<int64_t>(std::llround(hop_ms * static_cast<double>(sample_rate) / 1000.0));
}

int64_t SpeechFeatureOptions::window_samples() const {
  return static_cast<int64_t>(std::llround(window_ms * static_cast<double>(sample_rate) / 1000.0));
}

int64_t SpeechFeatureOptions::frames(int64_t samples) const {
  const int64_t hop = hop_samples();
  if (samples <= 0 || hop <= 0) return 0;
  const int64_t stft_frames = 1 + (samples + 2 * (n_fft / 2) - n_fft) / hop;  // centred: n_fft / 2 each side
  if (kind == SpeechFeatureKind::kLogSpectrogram) return stft_frames;
  return std::min(stft_frames, (samples + hop - 1) / hop);  // Jasper's get_seq_len: ceil(samples / hop)
}

int64_t SpeechFeatureOptions::min_samples() const {
  int64_t n = n_fft / 2 + 1;
  if (normalize && hop_samples() > 0)
    while (frames(n) < 2) ++n;  // frames() grows by one every hop samples: at most a hop's steps
  return n;
}

SpeechFeatureOptions SpeechFeatureOptions::jasper() { return SpeechFeatureOptions{}; }

SpeechFeatureOptions SpeechFeatureOptions::deepspeech2() {
  SpeechFeatureOptions options;
  options.kind = SpeechFeatureKind::kLogSpectrogram;
  options.n_fft = 320;  // n_fft = win_length = int(sample_rate * window_size)
  options.preemphasis = 0.0;
  options.dither = 0.0;
  return options;
}

std::pair<double, double> vtlp_straight_part(double warp, double f_min, double f_max) {
  const double low = f_min + 100.0, high = f_max - 500.0;  // Kaldi's --vtln-low 100 --vtln-high -500
  return {low * std::max(1.0, warp), high * std::min(1.0, warp)};
}

double vtlp_warp_hz(double hz, double warp, double f_min, double f_max) {
  MIXSEQ_CHECK(warp >= 0.5 && warp <= 2.0, "vocal tract length perturbation: the warp factor must be in [0.5, 2], not ",
               warp);
  if (hz < f_min || hz > f_max) return hz;
  const auto [l, h] = vtlp_straight_part(warp, f_min, f_max);
  MIXSEQ_CHECK(l > f_min && h < f_max && l < h, "vocal tract length perturbation: the band ", f_min, "-", f_max,
               " Hz is too narrow for warp ", warp, " (its straight part would run from ", l, " to ", h, " Hz)");
  const double scale = 1.0 / warp;
  if (hz < l) return f_min + (scale * l - f_min) / (l - f_min) * (hz - f_min);
  if (hz < h) return scale * hz;
  return f_max + (f_max - scale * h) / (f_max - h) * (hz - f_max);
}

// librosa.filters.mel (htk=False, norm='slaney'), computed in double as librosa does.
torch::Tensor mel_filterbank(int64_t sample_rate, int64_t n_fft, int64_t n_mels, double f_min, double f_max,
                             double warp) {
  MIXSEQ_CHECK(sample_rate > 0 && n_fft >= 2 && n_mels >= 1, "mel_filterbank: needs sample_rate > 0, n_fft >= 2",
               " and n_mels >= 1, not ", sample_rate, ", ", n_fft, ", ", n_mels);
  if (f_max <= 0.0) f_max = static_cast<double>(sample_rate) / 2.0;
  MIXSEQ_CHECK(f_min >= 0.0 && f_min < f_max, "mel_filterbank: needs 0 <= f_min < f_max, not ", f_min, ", ", f_max);
  const int64_t n_freqs = n_fft / 2 + 1;
  std::vector<double> fft_hz(static_cast<size_t>(n_freqs));  // np.linspace(0, sr / 2, n_freqs)
  for (int64_t k = 0; k < n_freqs; ++k)
    fft_hz[static_cast<size_t>(k)] = static_cast<double>(sample_rate) / 2.0 * static_cast<double>(k) /
                                     static_cast<double>(n_freqs - 1);
  std::vector<double> band_hz(static_cast<size_t>(n_mels + 2));  // n_mels + 2 edges equally spaced in mels
  const double mel_min = hz_to_mel(f_min), mel_max = hz_to_mel(f_max);
  for (int64_t i = 0; i < n_mels + 2; ++i)
    band_hz[static_cast<size_t>(i)] =
        mel_to_hz(mel_min + (mel_max - mel_min) * static_cast<double>(i) / static_cast<double>(n_mels + 1));
  if (warp != 1.0)
    for (double& edge : band_hz) edge = vtlp_warp_hz(edge, warp, f_min, f_max);

  auto weights = torch::zeros({n_mels, n_freqs}, torch::kFloat);  // [n_mels, n_freqs]
  auto w = weights.accessor<float, 2>();
  for (int64_t m = 0; m < n_mels; ++m) {
    const double lo = band_hz[m], centre = band_hz[m + 1], hi = band_hz[m + 2];
    const double area_norm = 2.0 / (hi - lo);  // norm='slaney'
    for (int64_t k = 0; k < n_freqs; ++k) {
      const double rising = (fft_hz[k] - lo) / (centre - lo);
      const double falling = (hi - fft_hz[k]) / (hi - centre);
      w[m][k] = static_cast<float>(std::max(0.0, std::min(rising, falling)) * area_norm);
    }
  }
  return weights;
}

torch::Tensor speech_features(const std::vector<float>& samples, const SpeechFeatureOptions& options,
                              c10::optional<at::Generator> generator) {
  check_options(options);
  const auto n = static_cast<int64_t>(samples.size());
  // torch.stft(center=True) reflects n_fft / 2 samples at each end: it needs more than that.
  MIXSEQ_CHECK(n > options.n_fft / 2, "speech features: ", n, " samples (", 1000.0 * n / options.sample_rate,
               " ms) are too few for a centred STFT of n_fft ", options.n_fft, "; at least ", options.n_fft / 2 + 1,
               " are needed");
  const int64_t frames = options.frames(n);
  MIXSEQ_CHECK(!options.normalize || frames >= 2, "speech features: ", n, " samples make ", frames,
               " frame, too few to normalise (a standard deviation needs 2)");
  const int64_t hop = options.hop_samples();
  const int64_t window_length = options.window_samples();

  auto x = torch::from_blob(const_cast<float*>(samples.data()), {n}, torch::kFloat).clone();  // [N]
  if (generator && options.dither > 0.0) x += options.dither * torch::randn({n}, *generator, torch::kFloat);

  if (options.kind == SpeechFeatureKind::kLogMel) {
    if (options.preemphasis != 0.0)
      x = torch::cat({x.slice(0, 0, 1), x.slice(0, 1) - options.preemphasis * x.slice(0, 0, n - 1)});  // [N]
    // features.py: torch.hann_window(win_length, periodic=False), zero-padded to n_fft by torch.stft.
    const auto window = torch::hann_window(window_length, /*periodic=*/false, torch::kFloat);
    const auto spectrum = torch::stft(x, options.n_fft, hop, window_length, window, /*center=*/true, "reflect",
                                      /*normalized=*/false, /*onesided=*/true, /*return_complex=*/true);  // [F, T+]
    const auto power = torch::view_as_real(spectrum).pow(2).sum(-1);                                      // [F, T+]
    const auto filters = mel_filterbank(options.sample_rate, options.n_fft, options.n_mels, 0.0, 0.0,
                                        options.vtlp_warp);  // [M, F]
    // features.py: torch.log(x + 1e-20), on the frames seq_len = ceil(samples / hop) keeps.
    auto features = torch::log(torch::matmul(filters, power) + 1e-20).slice(1, 0, frames);  // [M, T]
    if (options.normalize) features = normalize(features, /*dim=*/1, /*eps=*/1e-5);         // per mel bin
    return features.t().contiguous();                                                        // [T, M]
  }

  // data_loader.py: librosa.stft(n_fft, hop, win_length, window=scipy.signal.hamming), which calls the
  // window function with the length only: sym=True, the symmetric window (periodic=false here).
  const auto window = torch::hamming_window(window_length, /*periodic=*/false, torch::kFloat);
  const auto spectrum = torch::stft(x, options.n_fft, hop, window_length, window, /*center=*/true, "reflect",
                                    /*normalized=*/false, /*onesided=*/true, /*return_complex=*/true);  // [F, T]
  auto features = torch::log1p(spectrum.abs());                                                       // [F, T]
  if (options.normalize) features = normalize(features, c10::nullopt, /*eps=*/0.0);
  return features.t().contiguous();  // [T, F]
}

void spec_augment(torch::Tensor& features, const SpecAugmentOptions& options, at::Generator& generator) {
  MIXSEQ_CHECK(features.dim() == 2, "spec_augment: features must be [frames, bins], not ", features.sizes());
  MIXSEQ_CHECK(options.freq_masks >= 0 && options.max_freq >= 0 && options.time_masks >= 0 && options.max_time >= 0,
               "spec_augment: mask counts and widths must be >= 0");
  const int64_t frames = features.size(0), bins = features.size(1);
  const auto draw = [&](int64_t low, int64_t high) {  // uniform in [low, high)
    return torch::randint(low, high, {1}, generator, torch::kLong).item<int64_t>();
  };
  // Jasper's SpecAugment.forward: w = randint(min, max + 1), start = randint(0, max(1, n - w)), in
  // that order, the frequency masks first; the band is cut at the edge when w > n.
  auto mask_band = [&](int64_t dim, int64_t n, int64_t max_width) {
    const int64_t width = draw(0, max_width + 1);
    const int64_t start = draw(0, std::max<int64_t>(1, n - width));
    const int64_t end = std::min(n, start + width);
    if (end > start) features.narrow(dim, start, end - start).zero_();
  };
  if (options.max_freq > 0)
    for (int64_t i = 0; i < options.freq_masks; ++i) mask_band(/*dim=*/1, bins, options.max_freq);
  if (options.max_time > 0)
    for (int64_t i = 0; i < options.time_masks; ++i) mask_band(/*dim=*/0, frames, options.max_time);
}

std::vector<float> change_speed(const std::vector<float>& samples, double factor, int64_t sample_rate) {
  MIXSEQ_CHECK(factor > 0.0 && std::isfinite(factor), "change_speed: the factor must be > 0, not ", factor);
  MIXSEQ_CHECK(sample_rate > 0, "change_speed: sample_rate must be > 0, not ", sample_rate);
  const auto rate = static_cast<double>(sample_rate);
  return resample_audio(samples, rate * factor, rate);
}

}  // namespace mixseq
