#include "mixseq/audio/griffin_lim.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>

#include "mixseq/audio/audio_file.h"
#include "mixseq/audio/speech_features.h"
#include "test_support.h"

namespace mixseq {
namespace {

constexpr double kPiGriffinLim = 3.14159265358979323846;

// 1 s at 16 kHz: three steady partials and a linear chirp from 200 Hz to 3 kHz.
torch::Tensor test_signal(int64_t rate = 16000, int64_t n = 16000) {
  const auto t = torch::arange(n, torch::kDouble) / static_cast<double>(rate);
  auto x = 0.3 * torch::sin(2 * kPiGriffinLim * 440.0 * t) + 0.2 * torch::sin(2 * kPiGriffinLim * 1230.0 * t) +
           0.1 * torch::sin(2 * kPiGriffinLim * 2500.0 * t);
  const double f0 = 200.0, f1 = 3000.0, seconds = static_cast<double>(n) / rate;
  x = x + 0.2 * torch::sin(2 * kPiGriffinLim * (f0 * t + (f1 - f0) / (2 * seconds) * t * t));
  return x.to(torch::kFloat);
}

GriffinLimOptions small_options() {
  GriffinLimOptions o;
  o.n_fft = 512;
  o.hop_length = 128;
  return o;
}

double convergence_after(int64_t iterations, double momentum) {
  const auto x = test_signal();
  auto o = small_options();
  o.iterations = iterations;
  o.momentum = momentum;
  const auto magnitudes = stft_magnitude(x, o);  // [257, 126]
  auto generator = at::detail::createCPUGenerator(7);
  const auto y = griffin_lim(magnitudes, o, x.size(0), generator);
  EXPECT_EQ(y.size(0), x.size(0));
  return spectral_convergence(magnitudes, y, o);
}

// Measured (LibTorch 1.13, CPU, this seed): the random initial phase alone gives SC 0.83; 32 plain
// iterations 0.163, 32 fast ones (momentum 0.99) 0.090, 100 fast ones 0.058. torchaudio's own
// griffinlim (torch.manual_seed(7), the same signal and settings) gives the same four figures to 6 digits. The bounds
// leave ~40% over those values; a broken update (momentum term of the wrong sign, no phase
// normalisation, a window differing between stft and istft) does not come below 0.3.
TEST(GriffinLim, RoundTripOfAKnownSignalConverges) {
  const double random_phase = convergence_after(0, 0.99);
  const double plain = convergence_after(32, 0.0);
  const double fast = convergence_after(32, 0.99);
  const double fast_long = convergence_after(100, 0.99);
  std::cout << "spectral convergence: random phase " << random_phase << ", 32 plain " << plain << ", 32 fast " << fast
            << ", 100 fast " << fast_long << std::endl;
  EXPECT_GT(random_phase, 0.5);
  EXPECT_LT(plain, 0.23);
  EXPECT_LT(fast, 0.13);
  EXPECT_LT(fast_long, 0.08);
  EXPECT_LT(fast_long, fast);
  EXPECT_LT(fast, plain);  // the momentum is what makes it fast
}

TEST(GriffinLim, PowerSpectrogramEqualsMagnitudes) {
  const auto x = test_signal();
  auto o = small_options();
  o.iterations = 8;
  const auto magnitudes = stft_magnitude(x, o);
  const auto a = griffin_lim(magnitudes, o, 0, at::detail::createCPUGenerator(3));
  o.power = 2.0;
  const auto b = griffin_lim(magnitudes.pow(2), o, 0, at::detail::createCPUGenerator(3));
  EXPECT_EQ(a.size(0), (magnitudes.size(1) - 1) * o.hop_length);  // istft's natural length
  EXPECT_TRUE(torch::allclose(a, b, 1e-4, 1e-5));
}

TEST(GriffinLim, MelFramesInvertThroughThePseudoInverse) {
  const auto x = test_signal();
  auto o = small_options();
  o.iterations = 60;
  const auto magnitudes = stft_magnitude(x, o);                         // [257, T]
  const auto filterbank = mel_filterbank(16000, o.n_fft, 80);           // [80, 257], speech_features' filters
  const auto mel = torch::matmul(filterbank, magnitudes.pow(2));        // [80, T] energies, as speech_features
  const auto linear = mel_to_magnitude(mel, filterbank, /*power=*/2.0);  // [257, T]
  ASSERT_EQ(linear.sizes(), magnitudes.sizes());
  EXPECT_GE(linear.min().item<float>(), 0.0f);
  // The mel projection of the inverse gives the mel frames back closely (pinv is a right inverse of
  // the full-rank 80 x 257 filterbank; only the clamp at 0 and the root lose anything).
  const auto mel_again = torch::matmul(filterbank, linear.pow(2));
  const double mel_error = ((mel_again - mel).norm() / mel.norm()).item<double>();
  EXPECT_LT(mel_error, 0.09);  // measured 0.059
  // And the waveform Griffin-Lim makes from them has the mel frames of the original signal.
  const auto y = griffin_lim(linear, o, x.size(0), at::detail::createCPUGenerator(5));
  const auto mel_y = torch::matmul(filterbank, stft_magnitude(y, o).pow(2));
  const double mel_convergence = ((mel_y - mel).norm() / mel.norm()).item<double>();
  std::cout << "mel reconstruction error " << mel_error << ", mel frames of the waveform " << mel_convergence
            << std::endl;
  EXPECT_LT(mel_convergence, 0.16);  // measured 0.109
}

// speech_features' own log-mel frames (unnormalised, pre-emphasis on) back to audio and forward
// again: the frames of the result against the original ones.
TEST(GriffinLim, LogMelFeaturesBackToAudio) {
  const auto x = test_signal();
  std::vector<float> samples(x.data_ptr<float>(), x.data_ptr<float>() + x.numel());
  SpeechFeatureOptions features;  // Jasper's log-mel: 64 bins, 20 ms window, 10 ms hop, n_fft 512
  features.normalize = false;
  features.dither = 0.0;
  const auto log_mel = speech_features(samples, features);  // [T, 64]
  GriffinLimOptions o;
  o.iterations = 60;
  const auto audio = log_mel_to_audio(log_mel, features, o, x.size(0), at::detail::createCPUGenerator(11));
  ASSERT_EQ(audio.size(), samples.size());
  const auto again = speech_features(audio, features);
  const auto mel = torch::exp(log_mel), mel_again = torch::exp(again);
  const double convergence = ((mel_again - mel).norm() / mel.norm()).item<double>();
  // In the log domain over 50 dB below the loudest bin (quieter bins of these pure tones are ~1e-20,
  // where any residue of the phase estimate is a large log difference).
  const double floor = mel.max().item<double>() * 1e-5;
  const double log_error =
      (torch::log(mel_again.clamp_min(floor)) - torch::log(mel.clamp_min(floor))).abs().mean().item<double>();
  std::cout << "log-mel round trip: mel convergence " << convergence << ", mean |log difference| " << log_error
            << std::endl;
  EXPECT_LT(convergence, 0.14);  // measured 0.097
  EXPECT_LT(log_error, 1.5);     // measured 1.11 (nats, over the 50 dB floor)
  features.normalize = true;
  const std::string message = test::error_of([&] { log_mel_to_audio(log_mel, features); });
  EXPECT_NE(message.find("only unnormalised log-mel frames"), std::string::npos) << message;
}

// A spectrogram of 3 frames or fewer inverts to n_fft / 2 samples or fewer, too few for the
// STFT's reflection: LibTorch threw "Padding size should be less than the corresponding input
// dimension" (`synthesize --max-steps 2`). Those are padded with zeros; longer ones are untouched.
TEST(GriffinLim, SpectrogramsOfAFewFramesInvert) {
  auto o = small_options();  // n_fft 512, hop 128: 3 frames -> 256 samples
  o.iterations = 4;
  const auto x = test_signal();
  const auto magnitudes = stft_magnitude(x, o);
  for (int64_t frames = 1; frames <= 5; ++frames) {
    auto generator = at::detail::createCPUGenerator(7);
    const auto y = griffin_lim(magnitudes.slice(1, 40, 40 + frames).contiguous(), o, 0, generator);
    ASSERT_EQ(y.dim(), 1);
    EXPECT_EQ(y.size(0), (frames - 1) * o.hop_length) << frames;
    EXPECT_TRUE(torch::isfinite(y).all().item<bool>()) << frames;
    if (frames >= 2) EXPECT_GT(y.abs().max().item<float>(), 0.01f) << frames;
  }
  // The magnitudes of 200 samples: 2 frames, zero-padded (LibTorch refused it too).
  EXPECT_EQ(stft_magnitude(x.slice(0, 0, 200), o).size(1), 2);
}

TEST(GriffinLim, BadShapesAndOptionsAreRefused) {
  auto o = small_options();
  const std::string bins = test::error_of([&] { griffin_lim(torch::ones({100, 4}), o); });
  EXPECT_NE(bins.find("n_fft / 2 + 1 = 257"), std::string::npos) << bins;
  o.momentum = 1.0;
  const std::string momentum = test::error_of([&] { griffin_lim(torch::ones({257, 4}), o); });
  EXPECT_NE(momentum.find("momentum must be in [0, 1)"), std::string::npos) << momentum;
}

std::vector<float> as_vector(const torch::Tensor& x) {
  const auto c = x.contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

TEST(AudioOut, WavAndFlacWriteThenReadRoundTrip) {
  test::TempDir dir;
  const auto x = as_vector(test_signal(22050, 11025));
  AudioReadOptions keep_rate;
  keep_rate.sample_rate = 0;
  for (const std::string name : {"speech.wav", "speech.FLAC"}) {
    const std::string path = dir.path(name);
    write_audio(path, x, 22050);
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
    const Audio audio = read_audio(path, keep_rate);
    EXPECT_EQ(audio.sample_rate, 22050) << name;
    ASSERT_EQ(audio.samples.size(), x.size()) << name;
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(audio.samples[i]) - x[i]));
    EXPECT_LE(worst, 0.5 / 32768 + 1e-9) << name;  // 16 bits, lossless in both
  }
  // FLAC is smaller than the WAV of the same samples (it is really FLAC, not a renamed WAV).
  EXPECT_LT(std::filesystem::file_size(dir.path("speech.FLAC")), std::filesystem::file_size(dir.path("speech.wav")));
  const std::string bytes = encode_audio(x, 22050, AudioFileFormat::kFlac);
  EXPECT_EQ(bytes.compare(0, 4, "fLaC"), 0);
  EXPECT_EQ(decode_audio(bytes, "in memory", keep_rate).samples.size(), x.size());
}

TEST(AudioOut, UnknownExtensionIsAClearError) {
  test::TempDir dir;
  const std::string path = dir.path("speech.mp3");
  const std::string message = test::error_of([&] { write_audio(path, {0.0f}, 16000); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("known: .wav, .flac"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace mixseq
