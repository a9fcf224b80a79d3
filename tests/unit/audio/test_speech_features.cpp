#include "mixseq/audio/speech_features.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

constexpr double kPiFeatures = 3.14159265358979323846;

// tests/data/speech_features/fixture.json: the reference front ends' own numbers
// (make_fixture.py runs Jasper's FilterbankFeatures and MLPerf DS2's SpectrogramParser).
const nlohmann::json& fixture() {
  static const nlohmann::json json =
      nlohmann::json::parse(test::read_file(MIXSEQ_TEST_DATA_DIR "/speech_features/fixture.json"));
  return json;
}

torch::Tensor matrix(const nlohmann::json& rows) {
  std::vector<torch::Tensor> out;
  for (const auto& row : rows) out.push_back(torch::tensor(row.get<std::vector<double>>(), torch::kFloat));
  return torch::stack(out);
}

std::vector<float> fixture_samples(int64_t n) {
  std::vector<float> x;
  for (const auto& v : fixture()["samples_int16"]) x.push_back(static_cast<float>(v.get<int64_t>() / 32768.0));
  x.resize(static_cast<size_t>(n));
  return x;
}

double max_abs_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(SpeechFeatures, MelFilterbankIsLibrosasSlaneyFilterbank) {
  const auto& fb = fixture()["mel_filterbank"];
  const auto expected = matrix(fb["values"]);  // [64, 257], torchaudio's melscale_fbanks(norm/mel_scale slaney)
  const auto mine = mel_filterbank(16000, fb["n_fft"].get<int64_t>(), fb["n_mels"].get<int64_t>());
  ASSERT_EQ(mine.sizes(), expected.sizes());
  const double gap = max_abs_difference(mine, expected);
  EXPECT_LT(gap, 2e-7) << "largest weight " << expected.max().item<double>();
  EXPECT_TRUE(torch::equal(mine > 0, expected > 0));
  RecordProperty("max_abs_difference", std::to_string(gap));
}

struct ReferenceCase {
  const char* key;
  SpeechFeatureOptions options;
  double atol;
};

class SpeechFeaturesReference : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(SpeechFeaturesReference, MatchesTheReferenceFrontEnd) {
  const ReferenceCase& c = GetParam();
  for (const auto& fixture_case : fixture()["cases"]) {
    const int64_t n = fixture_case["samples"].get<int64_t>();
    SCOPED_TRACE(std::to_string(n) + " samples");
    const auto expected = matrix(fixture_case[c.key]);  // [T, bins]
    const auto features = speech_features(fixture_samples(n), c.options);
    ASSERT_EQ(features.sizes(), expected.sizes());
    EXPECT_EQ(features.size(0), c.options.frames(n));
    EXPECT_EQ(features.size(1), c.options.bins());
    const double gap = max_abs_difference(features, expected);
    EXPECT_LT(gap, c.atol);
    std::cout << c.key << ", " << n << " samples: max |mixseq - reference| = " << gap << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, SpeechFeaturesReference,
                         ::testing::Values(ReferenceCase{"log_mel", SpeechFeatureOptions::jasper(), 2e-4},
                                           ReferenceCase{"log_spectrogram", SpeechFeatureOptions::deepspeech2(),
                                                         1e-4}),
                         [](const auto& info) { return std::string(info.param.key); });

TEST(SpeechFeatures, FramesFollowEachReference) {
  const auto jasper = SpeechFeatureOptions::jasper(), ds2 = SpeechFeatureOptions::deepspeech2();
  EXPECT_EQ(jasper.hop_samples(), 160);
  EXPECT_EQ(jasper.window_samples(), 320);
  EXPECT_EQ(jasper.bins(), 64);
  EXPECT_EQ(ds2.bins(), 161);
  // Jasper: ceil(samples / hop); DS2: the centred STFT's 1 + samples / hop.
  EXPECT_EQ(jasper.frames(16000), 100);
  EXPECT_EQ(jasper.frames(16001), 101);
  EXPECT_EQ(ds2.frames(16000), 101);
  EXPECT_EQ(ds2.frames(16159), 101);
  for (const int64_t n : {4000, 4073, 5000}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) x[static_cast<size_t>(t)] = static_cast<float>(std::sin(0.05 * t));
    EXPECT_EQ(speech_features(x, jasper).size(0), jasper.frames(n));
    EXPECT_EQ(speech_features(x, ds2).size(0), ds2.frames(n));
  }
}

TEST(SpeechFeatures, NormalisationAndItsAbsence) {
  const auto x = fixture_samples(4073);
  auto options = SpeechFeatureOptions::jasper();
  const auto normalized = speech_features(x, options);  // [T, 64]: each bin mean 0, std about 1
  EXPECT_LT(normalized.mean(0).abs().max().item<double>(), 1e-4);
  EXPECT_LT((normalized.std(0) - 1).abs().max().item<double>(), 1e-3);
  options.normalize = false;
  const auto raw = speech_features(x, options);
  const auto renormalized = (raw - raw.mean(0)) / (raw.std(0) + 1e-5);
  EXPECT_LT(max_abs_difference(renormalized, normalized), 1e-4);
  // Digital silence: log(0 + 1e-20) everywhere, then zeros; DS2 gives zeros where its loader divides 0 by 0.
  const std::vector<float> silence(4000, 0.0f);
  EXPECT_NEAR(speech_features(silence, options).max().item<double>(), std::log(1e-20), 1e-3);
  EXPECT_EQ(speech_features(silence, SpeechFeatureOptions::jasper()).abs().max().item<double>(), 0.0);
  EXPECT_EQ(speech_features(silence, SpeechFeatureOptions::deepspeech2()).abs().max().item<double>(), 0.0);
}

TEST(SpeechFeatures, DitherNeedsAGeneratorAndFollowsItsSeed) {
  const auto x = fixture_samples(4000);
  auto options = SpeechFeatureOptions::jasper();
  options.dither = 1e-4;
  const auto plain = speech_features(x, options);
  EXPECT_TRUE(torch::equal(plain, speech_features(x, options)));
  auto a = at::make_generator<at::CPUGeneratorImpl>(3), b = at::make_generator<at::CPUGeneratorImpl>(3);
  const auto dithered = speech_features(x, options, a);
  EXPECT_TRUE(torch::equal(dithered, speech_features(x, options, b)));
  EXPECT_FALSE(torch::equal(dithered, plain));
  EXPECT_LT((dithered - plain).abs().mean().item<double>(), 0.05);  // noise 70 dB below the signal
}

TEST(SpeechFeatures, ErrorsSayWhatIsWrong) {
  const std::vector<float> few(256, 0.1f);  // n_fft / 2: too few to reflect
  EXPECT_NE(test::error_of([&] { speech_features(few, SpeechFeatureOptions::jasper()); }).find("too few"),
            std::string::npos);
  auto options = SpeechFeatureOptions::deepspeech2();
  options.n_fft = 256;  // shorter than the 320-sample window
  EXPECT_NE(test::error_of([&] { speech_features(std::vector<float>(4000, 0.1f), options); }).find("n_fft 320"),
            std::string::npos);
  EXPECT_EQ(parse_speech_feature_kind("log_mel"), SpeechFeatureKind::kLogMel);
  EXPECT_EQ(parse_speech_feature_kind(speech_feature_kind_name(SpeechFeatureKind::kLogSpectrogram)),
            SpeechFeatureKind::kLogSpectrogram);
  EXPECT_NE(test::error_of([] { parse_speech_feature_kind("mfcc"); }).find("known: log_mel, log_spectrogram"),
            std::string::npos);
}

// min_samples() is the boundary of speech_features()'s own checks: it takes that many samples and
// refuses one fewer. Jasper's 512-point FFT needs 257 (which make 2 frames); DeepSpeech2's 320-point
// 161; a 64-point FFT with a 160-sample hop 33, or 161 when normalising (2 frames: ceil(n / 160) >= 2).
TEST(SpeechFeatures, MinSamplesIsTheFewestTheyTake) {
  auto short_fft = SpeechFeatureOptions::jasper();
  short_fft.n_fft = 64;
  short_fft.window_ms = 4.0;
  auto short_fft_plain = short_fft;
  short_fft_plain.normalize = false;
  auto narrowband = SpeechFeatureOptions::jasper();
  narrowband.sample_rate = 8000;
  narrowband.n_fft = 256;
  const std::vector<std::pair<SpeechFeatureOptions, int64_t>> cases = {
      {SpeechFeatureOptions::jasper(), 257}, {SpeechFeatureOptions::deepspeech2(), 161},
      {short_fft, 161}, {short_fft_plain, 33}, {narrowband, 129}};
  for (const auto& [options, expected] : cases) {
    EXPECT_EQ(options.min_samples(), expected);
    const auto n = static_cast<size_t>(options.min_samples());
    EXPECT_NO_THROW(speech_features(std::vector<float>(n, 0.1f), options)) << n;
    EXPECT_FALSE(test::error_of([&] { speech_features(std::vector<float>(n - 1, 0.1f), options); }).empty()) << n;
  }
}

TEST(SpecAugment, MasksWhereJaspersSpecAugmentMasksForTheSameSeed) {
  const auto& reference = fixture()["spec_augment"];
  SpecAugmentOptions options;
  options.freq_masks = reference["freq_masks"].get<int64_t>();
  options.max_freq = reference["max_freq"].get<int64_t>();
  options.time_masks = reference["time_masks"].get<int64_t>();
  options.max_time = reference["max_time"].get<int64_t>();
  for (const auto& draw : reference["draws"]) {
    const int64_t frames = draw["frames"].get<int64_t>(), bins = draw["bins"].get<int64_t>();
    SCOPED_TRACE("seed " + std::to_string(draw["seed"].get<uint64_t>()));
    auto expected = torch::ones({frames, bins});
    for (const auto f : draw["zeroed_bins"].get<std::vector<int64_t>>()) expected.select(1, f).zero_();
    for (const auto t : draw["zeroed_frames"].get<std::vector<int64_t>>()) expected.select(0, t).zero_();
    auto features = torch::ones({frames, bins});
    auto generator = at::make_generator<at::CPUGeneratorImpl>(draw["seed"].get<uint64_t>());
    spec_augment(features, options, generator);
    EXPECT_TRUE(torch::equal(features, expected));
  }
}

// The zeroed bins and frames of ones [frames, bins] after spec_augment.
std::pair<std::vector<int64_t>, std::vector<int64_t>> zeroed(const torch::Tensor& features) {
  const auto zero = features == 0;
  std::vector<int64_t> bins, frames;
  for (int64_t f = 0; f < features.size(1); ++f)
    if (zero.select(1, f).all().item<bool>()) bins.push_back(f);
  for (int64_t t = 0; t < features.size(0); ++t)
    if (zero.select(0, t).all().item<bool>()) frames.push_back(t);
  return {bins, frames};
}

TEST(SpecAugment, ZeroesBandsWithinTheBoundsAndFollowsTheSeed) {
  SpecAugmentOptions options;  // Jasper's: 2 x up to 20 bins, 2 x up to 75 frames
  int64_t widest_bins = 0, widest_frames = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    auto features = torch::ones({300, 64});
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    spec_augment(features, options, generator);
    const auto [bins, frames] = zeroed(features);
    // Only whole bins and frames are zeroed; nothing else changes.
    auto expected = torch::ones({300, 64});
    for (const auto f : bins) expected.select(1, f).zero_();
    for (const auto t : frames) expected.select(0, t).zero_();
    ASSERT_TRUE(torch::equal(features, expected)) << "seed " << seed;
    EXPECT_LE(static_cast<int64_t>(bins.size()), options.freq_masks * options.max_freq);
    EXPECT_LE(static_cast<int64_t>(frames.size()), options.time_masks * options.max_time);
    widest_bins = std::max<int64_t>(widest_bins, static_cast<int64_t>(bins.size()));
    widest_frames = std::max<int64_t>(widest_frames, static_cast<int64_t>(frames.size()));
    // The same seed masks the same places.
    auto again = torch::ones({300, 64});
    auto same = at::make_generator<at::CPUGeneratorImpl>(seed);
    spec_augment(again, options, same);
    EXPECT_TRUE(torch::equal(again, features));
  }
  EXPECT_GT(widest_bins, options.max_freq);  // two masks seen wider than one
  EXPECT_GT(widest_frames, options.max_time);

  SpecAugmentOptions time_only = options;
  time_only.freq_masks = 0;
  auto features = torch::ones({300, 64});
  auto generator = at::make_generator<at::CPUGeneratorImpl>(5);
  spec_augment(features, time_only, generator);
  EXPECT_TRUE(zeroed(features).first.empty());
  const SpecAugmentOptions none{0, 20, 0, 75};
  EXPECT_FALSE(none.enabled());
}

// The strongest frequency of x, in Hz.
double peak_hz(const std::vector<float>& x, int64_t rate) {
  const auto spectrum = torch::fft::rfft(torch::tensor(x)).abs();
  return spectrum.argmax().item<double>() * static_cast<double>(rate) / static_cast<double>(x.size());
}

// Hand-computed points of Kaldi's three-piece warp on 0-4000 Hz (cut-offs 100 and 3500 Hz).
TEST(VocalTractLengthPerturbation, WarpsAsKaldisVtlnWarpFreq) {
  // warp 1.1: l = 110, h = 3500; hz / 1.1 between them; 0 and 4000 fixed.
  EXPECT_DOUBLE_EQ(vtlp_warp_hz(1000.0, 1.1, 0.0, 4000.0), 1000.0 / 1.1);
  EXPECT_NEAR(vtlp_warp_hz(50.0, 1.1, 0.0, 4000.0), 50.0 * 100.0 / 110.0, 1e-9);
  EXPECT_NEAR(vtlp_warp_hz(3800.0, 1.1, 0.0, 4000.0), 4000.0 - (4000.0 - 3500.0 / 1.1) / 500.0 * 200.0, 1e-9);
  // warp 0.9: l = 100, h = 3150.
  EXPECT_NEAR(vtlp_warp_hz(1000.0, 0.9, 0.0, 4000.0), 1000.0 / 0.9, 1e-9);
  EXPECT_NEAR(vtlp_warp_hz(3500.0, 0.9, 0.0, 4000.0), 4000.0 - 500.0 / 850.0 * 500.0, 1e-9);
  for (const double warp : {0.8, 0.9, 1.0, 1.1, 1.25}) {
    SCOPED_TRACE(warp);
    EXPECT_DOUBLE_EQ(vtlp_warp_hz(0.0, warp, 0.0, 4000.0), 0.0);
    EXPECT_NEAR(vtlp_warp_hz(4000.0, warp, 0.0, 4000.0), 4000.0, 1e-9);
    EXPECT_EQ(vtlp_warp_hz(4100.0, warp, 0.0, 4000.0), 4100.0);  // outside the band: as it is
    double previous = -1.0;
    // Increasing, and with no jump at the cut-offs: no piece is steeper than the top one, whose
    // slope (4000 - 3500 min(1, warp) / warp) / (4000 - 3500 min(1, warp)) is at most 2.4 here.
    for (double hz = 0.0; hz <= 4000.0; hz += 7.0) {
      const double warped = vtlp_warp_hz(hz, warp, 0.0, 4000.0);
      EXPECT_GT(warped, previous);
      EXPECT_LT(warped - previous, 7.0 * 2.4 + 1e-9);
      previous = warped;
    }
  }
  EXPECT_DOUBLE_EQ(vtlp_warp_hz(1234.5, 1.0, 0.0, 4000.0), 1234.5);
  EXPECT_NE(test::error_of([] { vtlp_warp_hz(100.0, 2.5, 0.0, 4000.0); }).find("[0.5, 2]"), std::string::npos);
  EXPECT_NE(test::error_of([] { vtlp_warp_hz(100.0, 1.1, 0.0, 600.0); }).find("too narrow"), std::string::npos);
}

// A filter whose edges all lie in the straight part is the unwarped one squeezed by the warp:
// W_warp[m](f) = warp * W[m](warp * f) (Slaney's area normalisation follows the narrower triangle).
// With warp 1.25 and bins 15.625 Hz apart, 1.25 f lands on a bin for every 4th bin.
TEST(VocalTractLengthPerturbation, WarpedFiltersHearTheScaledSpectrum) {
  const double warp = 1.25;
  const auto plain = mel_filterbank(8000, 512, 64);
  const auto warped = mel_filterbank(8000, 512, 64, 0.0, 0.0, warp);
  EXPECT_TRUE(torch::equal(mel_filterbank(8000, 512, 64, 0.0, 0.0, 1.0), plain));
  ASSERT_EQ(warped.sizes(), plain.sizes());
  const double bin_hz = 8000.0 / 512.0;
  int checked = 0;
  for (int64_t m = 0; m < 64; ++m) {
    const auto nonzero = plain[m].nonzero();
    const double lo = (nonzero.min().item<double>() - 1) * bin_hz, hi = (nonzero.max().item<double>() + 1) * bin_hz;
    if (lo < 125.0 || hi >= 3500.0) continue;  // l = 100 * 1.25, h = 3500
    for (int64_t k = 0; 5 * k / 4 < 257; k += 4) {
      EXPECT_NEAR(warped[m][k].item<double>(), warp * plain[m][5 * k / 4].item<double>(), 1e-6)
          << "filter " << m << ", bin " << k;
    }
    ++checked;
  }
  EXPECT_GT(checked, 40);
  // Every warped filter still passes something and the band's ends stay put.
  EXPECT_TRUE((warped.sum(1) > 0).all().item<bool>());
  // And through the features: a 1 kHz tone through filters warped by 1.25 peaks where an 1.25 kHz
  // tone peaks without the warp.
  std::vector<float> tone(8000), higher(8000);
  for (int64_t t = 0; t < 8000; ++t) {
    tone[static_cast<size_t>(t)] = static_cast<float>(0.5 * std::sin(2 * kPiFeatures * 1000 * t / 8000.0));
    higher[static_cast<size_t>(t)] = static_cast<float>(0.5 * std::sin(2 * kPiFeatures * 1250 * t / 8000.0));
  }
  SpeechFeatureOptions options;
  options.sample_rate = 8000;
  options.normalize = false;
  const auto unwarped_peak = speech_features(higher, options).mean(0).argmax().item<int64_t>();
  options.vtlp_warp = warp;
  EXPECT_EQ(speech_features(tone, options).mean(0).argmax().item<int64_t>(), unwarped_peak);
  options.vtlp_warp = 1.0;
  EXPECT_NE(speech_features(tone, options).mean(0).argmax().item<int64_t>(), unwarped_peak);
  SpeechFeatureOptions spectrogram = SpeechFeatureOptions::deepspeech2();
  spectrogram.vtlp_warp = 1.1;
  EXPECT_NE(test::error_of([&] { speech_features(tone, spectrogram); }).find("log_spectrogram"), std::string::npos);
}

TEST(SpeedPerturbation, PlaysFasterAndHigher) {
  std::vector<float> x(16000);
  for (int64_t t = 0; t < 16000; ++t)
    x[static_cast<size_t>(t)] = static_cast<float>(0.5 * std::sin(2 * kPiFeatures * 440 * t / 16000.0));
  const auto faster = change_speed(x, 1.1, 16000);
  EXPECT_NEAR(static_cast<double>(faster.size()), 16000 / 1.1, 1.0);
  EXPECT_NEAR(peak_hz(faster, 16000), 484.0, 2.0);
  const auto slower = change_speed(x, 0.9, 16000);
  EXPECT_NEAR(static_cast<double>(slower.size()), 16000 / 0.9, 1.0);
  EXPECT_NEAR(peak_hz(slower, 16000), 396.0, 2.0);
  EXPECT_NE(test::error_of([&] { change_speed(x, 0.0, 16000); }).find("factor"), std::string::npos);
}

}  // namespace
}  // namespace mixseq
