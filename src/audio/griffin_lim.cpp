#include "mixseq/audio/griffin_lim.h"

#include <ATen/ATen.h>

#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"

namespace mixseq {
namespace {

int64_t window_length(const GriffinLimOptions& o) { return o.win_length > 0 ? o.win_length : o.n_fft; }

void check_options(const GriffinLimOptions& o) {
  MIXSEQ_CHECK(o.n_fft >= 2, "griffin_lim: n_fft must be >= 2, not ", o.n_fft);
  MIXSEQ_CHECK(o.hop_length >= 1 && o.hop_length <= window_length(o), "griffin_lim: hop_length (", o.hop_length,
               ") must be in [1, win_length = ", window_length(o), "]");
  MIXSEQ_CHECK(window_length(o) <= o.n_fft, "griffin_lim: win_length (", o.win_length, ") must be <= n_fft (",
               o.n_fft, ")");
  MIXSEQ_CHECK(o.iterations >= 0, "griffin_lim: iterations must be >= 0, not ", o.iterations);
  MIXSEQ_CHECK(o.momentum >= 0.0 && o.momentum < 1.0, "griffin_lim: momentum must be in [0, 1), not ", o.momentum,
               " (Perraudin et al. 2013 suggest 0.99; 0 is the original Griffin-Lim)");
  MIXSEQ_CHECK(o.power > 0.0, "griffin_lim: power must be > 0, not ", o.power);
}

torch::Tensor hann(const GriffinLimOptions& o, const torch::Tensor& like) {
  return torch::hann_window(window_length(o), /*periodic=*/true, like.options());
}

// Centred, the signal reflected by n_fft / 2 samples at each end, as torchaudio's; a signal of n_fft / 2
// samples or fewer (the istft of 3 frames or fewer: a text the model stopped at once, --max-steps 2)
// has nothing to reflect, and LibTorch refuses it ("Padding size should be less than the
// corresponding input dimension"), as torchaudio does: such a signal is padded with zeros.
torch::Tensor stft(const torch::Tensor& x, const GriffinLimOptions& o, const torch::Tensor& window) {
  const bool reflect = x.size(-1) > o.n_fft / 2;
  return torch::stft(x, o.n_fft, o.hop_length, window_length(o), window, /*center=*/true, reflect ? "reflect" : "constant",
                     /*normalized=*/false, /*onesided=*/true, /*return_complex=*/true);  // [F, T]
}

torch::Tensor istft(const torch::Tensor& spectrum, const GriffinLimOptions& o, const torch::Tensor& window,
                    int64_t length) {
  return torch::istft(spectrum, o.n_fft, o.hop_length, window_length(o), window, /*center=*/true,
                      /*normalized=*/false, /*onesided=*/true,
                      length > 0 ? c10::optional<int64_t>(length) : c10::nullopt);  // [T']
}

}  // namespace

torch::Tensor stft_magnitude(const torch::Tensor& waveform, const GriffinLimOptions& options) {
  check_options(options);
  const auto x = waveform.to(torch::kFloat);
  return stft(x, options, hann(options, x)).abs();  // [F, T]
}

// torchaudio.functional.griffinlim, step for step: x_n = istft(S * a_n); c_n = stft(x_n);
// a_{n+1} = normalise(c_n - momentum / (1 + momentum) * c_{n-1}) (Perraudin et al. 2013, eq. 4,
// with torchaudio's scaling of alpha), and the last phase's istft.
torch::Tensor griffin_lim(const torch::Tensor& spectrogram, const GriffinLimOptions& options, int64_t length,
                          c10::optional<at::Generator> generator) {
  check_options(options);
  MIXSEQ_CHECK(spectrogram.dim() == 2 && spectrogram.size(0) == options.n_fft / 2 + 1 && spectrogram.size(1) >= 1,
               "griffin_lim: the spectrogram must be [n_fft / 2 + 1 = ", options.n_fft / 2 + 1, ", frames], not ",
               spectrogram.sizes());
  MIXSEQ_CHECK(length >= 0, "griffin_lim: length must be >= 0, not ", length);
  // The centred inverse of one frame has no samples (LibTorch's istft fails on it).
  if (spectrogram.size(1) == 1 && length == 0) return torch::zeros({0}, spectrogram.options().dtype(torch::kFloat));
  auto magnitude = spectrogram.to(torch::kFloat);                                  // [F, T]
  if (options.power != 1.0) magnitude = magnitude.clamp_min(0).pow(1.0 / options.power);
  const auto window = hann(options, magnitude);
  torch::Tensor angles;                                                            // [F, T] complex
  if (options.random_init) {
    // torch.rand(complex): real and imaginary parts each uniform in [0, 1).
    const auto parts = torch::rand({magnitude.size(0), magnitude.size(1), 2}, generator, magnitude.options());
    angles = torch::view_as_complex(parts);
  } else {
    angles = torch::complex(torch::ones_like(magnitude), torch::zeros_like(magnitude));
  }
  const double beta = options.momentum / (1.0 + options.momentum);
  torch::Tensor previous;  // c_{n-1}; 0 at the first step
  const bool on_cpu = magnitude.device().is_cpu();
  for (int64_t i = 0; i < options.iterations; ++i) {
    if (on_cpu) adapt_threads_to_load();  // a busy core is given up between iterations (docs/threads.md)
    const auto inverse = istft(magnitude * angles, options, window, length);     // [T']
    const auto rebuilt = stft(inverse, options, window);                          // [F, T]
    angles = previous.defined() && beta > 0.0 ? rebuilt - previous * beta : rebuilt;
    angles = angles / (angles.abs() + 1e-16);
    previous = rebuilt;
  }
  return istft(magnitude * angles, options, window, length);                      // [T']
}

torch::Tensor mel_to_magnitude(const torch::Tensor& mel, const torch::Tensor& filterbank, double power) {
  MIXSEQ_CHECK(mel.dim() == 2 && filterbank.dim() == 2 && mel.size(0) == filterbank.size(0),
               "mel_to_magnitude: mel [M, T] and filterbank [M, F] must agree on M, not ", mel.sizes(), " and ",
               filterbank.sizes());
  MIXSEQ_CHECK(power > 0.0, "mel_to_magnitude: power must be > 0, not ", power);
  // The least-squares (minimum-norm) inverse: the filters overlap, so there is no exact one.
  const auto inverse = torch::linalg_pinv(filterbank.to(torch::kDouble)).to(torch::kFloat);  // [F, M]
  auto linear = torch::matmul(inverse, mel.to(torch::kFloat)).clamp_min(0.0);               // [F, T]
  return power == 1.0 ? linear : linear.pow(1.0 / power);
}

double spectral_convergence(const torch::Tensor& magnitudes, const torch::Tensor& waveform,
                            const GriffinLimOptions& options) {
  const auto rebuilt = stft_magnitude(waveform, options);                            // [F, T2]
  MIXSEQ_CHECK(magnitudes.dim() == 2 && magnitudes.size(0) == rebuilt.size(0),
               "spectral_convergence: magnitudes must be [", rebuilt.size(0), ", frames], not ", magnitudes.sizes());
  const int64_t frames = std::min(magnitudes.size(1), rebuilt.size(1));
  const auto target = magnitudes.slice(1, 0, frames).to(torch::kDouble);
  const auto estimate = rebuilt.slice(1, 0, frames).to(torch::kDouble);
  return ((target - estimate).norm() / target.norm().clamp_min(1e-30)).item<double>();
}

std::vector<float> log_mel_to_audio(const torch::Tensor& log_mel, const SpeechFeatureOptions& features,
                                    const GriffinLimOptions& griffin_lim_options, int64_t length,
                                    c10::optional<at::Generator> generator) {
  MIXSEQ_CHECK(features.kind == SpeechFeatureKind::kLogMel && !features.normalize,
               "log_mel_to_audio: only unnormalised log-mel frames can be turned back into audio (features ",
               speech_feature_kind_name(features.kind), ", normalize ", features.normalize ? "true" : "false",
               "): the per-utterance mean and deviation are not kept");
  MIXSEQ_CHECK(log_mel.dim() == 2 && log_mel.size(1) == features.n_mels, "log_mel_to_audio: frames must be [T, n_mels = ",
               features.n_mels, "], not ", log_mel.sizes());
  GriffinLimOptions o = griffin_lim_options;
  o.n_fft = features.n_fft;
  o.hop_length = features.hop_samples();
  o.win_length = features.window_samples();
  o.power = 1.0;
  const auto mel_power = (torch::exp(log_mel.to(torch::kFloat).t()) - 1e-20).clamp_min(0.0);        // [M, T]
  const auto filterbank = mel_filterbank(features.sample_rate, features.n_fft, features.n_mels);    // [M, F]
  auto magnitude = mel_to_magnitude(mel_power, filterbank, /*power=*/2.0);                          // [F, T]
  // Jasper's features keep ceil(samples / hop) of the 1 + samples / hop STFT frames: the frames
  // `length` samples make are padded with copies of the last one.
  const int64_t stft_frames = length > 0 ? 1 + length / o.hop_length : magnitude.size(1);
  if (stft_frames > magnitude.size(1))
    magnitude = torch::cat({magnitude, magnitude.slice(1, -1).expand({-1, stft_frames - magnitude.size(1)})}, 1);
  const auto audio = griffin_lim(magnitude, o, length, generator).contiguous();                     // [N]
  std::vector<float> samples(audio.data_ptr<float>(), audio.data_ptr<float>() + audio.numel());
  if (features.preemphasis != 0.0) {  // the inverse of x[t] - k x[t-1]
    const auto k = static_cast<float>(features.preemphasis);
    for (size_t t = 1; t < samples.size(); ++t) samples[t] += k * samples[t - 1];
  }
  return samples;
}

}  // namespace mixseq
