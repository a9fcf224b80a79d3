// Audio out: magnitude spectrograms back to waveforms, for speech synthesis (Tacotron 2 predicts mel
// frames; OpenSeq2Seq's tacotron_LJ_float turns them into audio with Griffin-Lim).
//  - griffin_lim: the phase of a magnitude spectrogram estimated by Griffin & Lim (1984)'s
//    iteration, with the "fast Griffin-Lim" momentum of Perraudin, Balazs & Søndergaard (2013), as
//    torchaudio.functional.griffinlim computes it (LibTorch's stft/istft, a periodic Hann window,
//    centred frames with reflect padding).
//  - mel_to_magnitude: mel filterbank energies back to linear-frequency magnitudes through the
//    pseudo-inverse of the same filterbank speech_features uses (audio/speech_features.h,
//    mel_filterbank: Slaney's mel scale and normalisation), negative values clamped to 0.
//  - spectral_convergence: || |S| - |S'| ||_F / || |S| ||_F, how far a waveform's magnitudes are from
//    the target ones (0 = equal), the usual measure of a phase reconstruction.
// Pure functions of their inputs (and of the generator for a random initial phase); callable from
// several threads at once.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "mixseq/audio/speech_features.h"

namespace mixseq {

struct GriffinLimOptions {
  int64_t n_fft = 1024;       // FFT size: the magnitudes have n_fft / 2 + 1 bins
  int64_t hop_length = 256;   // samples between frames
  int64_t win_length = 0;     // periodic Hann window length (<= n_fft, zero-padded in the middle); 0 = n_fft
  int64_t iterations = 32;    // phase updates (torchaudio's n_iter); 0 keeps the initial phase
  double momentum = 0.99;     // fast Griffin-Lim's alpha, in [0, 1); 0 is the original algorithm
  double power = 1.0;         // the spectrogram holds |X|^power: 1 magnitudes, 2 energies
  bool random_init = true;    // initial phase random (torchaudio's rand_init); false: all zero phase
};

// [T'] waveform whose STFT magnitudes approach `spectrogram` ([F, T], F = n_fft / 2 + 1, holding
// |X|^power). `length` trims or pads the output to that many samples (0: the istft's natural
// (T - 1) * hop samples). `generator` draws the random initial phase (none: the default
// generator). Throws mixseq::Error for a spectrogram whose bins do not match n_fft, or bad options.
torch::Tensor griffin_lim(const torch::Tensor& spectrogram, const GriffinLimOptions& options, int64_t length = 0,
                          c10::optional<at::Generator> generator = c10::nullopt);

// [F, T] linear-frequency magnitudes (|X|) from [M, T] mel energies made with `filterbank` ([M, F],
// mel_filterbank(...)) from |X|^power: pinv(filterbank) @ mel, clamped at 0, then the power-th root.
torch::Tensor mel_to_magnitude(const torch::Tensor& mel, const torch::Tensor& filterbank, double power = 2.0);

// || |S| - |STFT(waveform)| ||_F / || |S| ||_F with the STFT griffin_lim uses; `magnitudes` [F, T] are
// |X| (power 1). Frames beyond the shorter of the two are ignored.
double spectral_convergence(const torch::Tensor& magnitudes, const torch::Tensor& waveform,
                            const GriffinLimOptions& options);

// |STFT(waveform)| [F, T] with griffin_lim's STFT (centred, reflect padding, periodic Hann window).
torch::Tensor stft_magnitude(const torch::Tensor& waveform, const GriffinLimOptions& options);

// Audio from log-mel frames [T, n_mels] that speech_features computed with `features` (kind log_mel,
// normalize false: per-utterance normalisation cannot be undone): exp and the 1e-20 floor removed,
// mel_to_magnitude through the same filterbank, griffin_lim at the features' n_fft and hop with
// `griffin_lim_options`' iterations, momentum and initial phase (its n_fft, hop and window fields are
// replaced by the features'; the window is periodic Hann where the features' is symmetric), then the
// pre-emphasis undone (y[t] = x[t] + k y[t - 1]). `length` as griffin_lim's. Throws mixseq::Error for
// normalised or log-spectrogram features, or frames whose width is not n_mels.
std::vector<float> log_mel_to_audio(const torch::Tensor& log_mel, const SpeechFeatureOptions& features,
                                    const GriffinLimOptions& griffin_lim_options = {}, int64_t length = 0,
                                    c10::optional<at::Generator> generator = c10::nullopt);

}  // namespace mixseq
