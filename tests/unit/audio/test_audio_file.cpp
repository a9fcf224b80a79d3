#include "mixseq/audio/audio_file.h"

#include <gtest/gtest.h>
#include <sndfile.h>

#include <ATen/ATen.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<float> sine(double hz, double amplitude, int64_t rate, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t)
    x[static_cast<size_t>(t)] = static_cast<float>(amplitude * std::sin(2 * kPi * hz * static_cast<double>(t) / rate));
  return x;
}

// Writes interleaved frames with libsndfile itself, in any format it writes.
void write_with_libsndfile(const std::string& path, int format, int channels, int64_t rate,
                           const std::vector<float>& interleaved) {
  SF_INFO info{};
  info.samplerate = static_cast<int>(rate);
  info.channels = channels;
  info.format = format;
  SNDFILE* file = sf_open(path.c_str(), SFM_WRITE, &info);
  ASSERT_NE(file, nullptr) << sf_strerror(nullptr);
  const auto frames = static_cast<sf_count_t>(interleaved.size() / static_cast<size_t>(channels));
  EXPECT_EQ(sf_writef_float(file, interleaved.data(), frames), frames);
  sf_close(file);
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0.0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

TEST(AudioFile, WriteThenReadRoundTripsWithinOneStep) {
  test::TempDir dir;
  auto x = sine(440.0, 0.8, 16000, 8000);
  x.insert(x.end(), {-1.0f, 0.99996f, 0.0f, 1e-6f, -0.5f});
  const std::string path = dir.path("tone.wav");
  write_wav(path, x, 16000);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  AudioReadOptions keep_rate;
  keep_rate.sample_rate = 0;
  const Audio audio = read_audio(path, keep_rate);
  EXPECT_EQ(audio.sample_rate, 16000);
  ASSERT_EQ(audio.samples.size(), x.size());
  EXPECT_LE(max_abs_difference(audio.samples, x), 0.5 / 32768 + 1e-9);  // round(x * 32768) / 32768
  EXPECT_NEAR(audio.seconds(), x.size() / 16000.0, 1e-12);
  // Same rate asked for: nothing resampled.
  EXPECT_EQ(read_audio(path).samples, audio.samples);
}

TEST(AudioFile, WriteClipsAndReplacesAWholeFile) {
  test::TempDir dir;
  const std::string path = dir.path("clip.wav");
  write_wav(path, sine(100.0, 0.1, 8000, 4000), 8000);
  write_wav(path, {2.0f, -3.0f, 0.25f}, 8000);  // replaces the first file
  AudioReadOptions keep_rate;
  keep_rate.sample_rate = 0;
  const Audio audio = read_audio(path, keep_rate);
  ASSERT_EQ(audio.samples.size(), 3u);
  EXPECT_FLOAT_EQ(audio.samples[0], 32767.0f / 32768.0f);
  EXPECT_FLOAT_EQ(audio.samples[1], -1.0f);
  EXPECT_FLOAT_EQ(audio.samples[2], 0.25f);
  EXPECT_EQ(audio.sample_rate, 8000);
}

TEST(AudioFile, WriteErrorNamesTheFile) {
  test::TempDir dir;
  const std::string path = dir.write("plain", "a file, not a folder") + "/x.wav";
  const std::string message = test::error_of([&] { write_wav(path, {0.0f}, 16000); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST(AudioFile, StereoIsMixedDownToTheMeanOfItsChannels) {
  test::TempDir dir;
  const auto left = sine(300.0, 0.5, 16000, 1600), right = sine(1200.0, 0.25, 16000, 1600);
  std::vector<float> interleaved, mean;
  for (size_t t = 0; t < left.size(); ++t) {
    interleaved.insert(interleaved.end(), {left[t], right[t]});
    mean.push_back((left[t] + right[t]) / 2);
  }
  const std::string path = dir.path("stereo.wav");
  write_with_libsndfile(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 2, 16000, interleaved);
  const Audio audio = read_audio(path);
  ASSERT_EQ(audio.samples.size(), mean.size());
  EXPECT_LE(max_abs_difference(audio.samples, mean), 1e-7);
}

TEST(AudioFile, ResamplingEightToSixteenKilohertzKeepsTheFrequency) {
  test::TempDir dir;
  const std::string path = dir.path("8k.wav");
  write_wav(path, sine(1000.0, 0.5, 8000, 8000), 8000);  // 1 s of 1 kHz at 8 kHz
  const Audio audio = read_audio(path);                   // 16 kHz by default
  EXPECT_EQ(audio.sample_rate, 16000);
  ASSERT_NEAR(static_cast<double>(audio.samples.size()), 16000.0, 1.0);
  // 1 s: rfft bin k is k Hz. Nearly all the energy stays at 1 kHz (a resampler's images and
  // aliases would sit at 7 kHz and above).
  const auto x = torch::tensor(audio.samples).narrow(0, 0, 16000);
  const auto energy = torch::fft::rfft(x).abs().pow(2);  // [8001]
  EXPECT_EQ(energy.argmax().item<int64_t>(), 1000);
  const double near = energy.slice(0, 990, 1011).sum().item<double>(), total = energy.sum().item<double>();
  EXPECT_GT(near / total, 0.999) << near << " of " << total;
  // and its amplitude: a 0.5 sine has mean square 0.125
  EXPECT_NEAR(x.pow(2).mean().item<double>(), 0.125, 0.002);
}

TEST(AudioFile, ResampleAudioKeepsTheLengthRatio) {
  const auto x = sine(440.0, 0.5, 22050, 22050);
  EXPECT_NEAR(static_cast<double>(resample_audio(x, 22050, 16000).size()), 16000.0, 1.0);
  EXPECT_EQ(resample_audio(x, 16000, 16000), x);
  EXPECT_NE(test::error_of([&] { resample_audio(x, 0, 16000); }).find("sample rates"), std::string::npos);
}

TEST(AudioFile, ReadsFlacAndOggVorbis) {
  test::TempDir dir;
  const auto x = sine(500.0, 0.5, 16000, 16000);
  const std::string flac = dir.path("tone.flac"), ogg = dir.path("tone.ogg");
  write_with_libsndfile(flac, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 1, 16000, x);
  write_with_libsndfile(ogg, SF_FORMAT_OGG | SF_FORMAT_VORBIS, 1, 16000, x);
  const Audio from_flac = read_audio(flac);
  ASSERT_EQ(from_flac.samples.size(), x.size());
  EXPECT_LE(max_abs_difference(from_flac.samples, x), 1.5 / 32768);  // 16 bits, lossless
  const Audio from_ogg = read_audio(ogg);
  ASSERT_EQ(from_ogg.samples.size(), x.size());
  EXPECT_LE(max_abs_difference(from_ogg.samples, x), 0.05);  // lossy, but close
}

TEST(AudioFile, DecodesTheBytesOfAFile) {
  test::TempDir dir;
  const std::string path = dir.path("tone.wav");
  write_wav(path, sine(700.0, 0.3, 22050, 5000), 22050);
  const Audio from_file = read_audio(path), from_bytes = decode_audio(test::read_file(path), "request body");
  EXPECT_EQ(from_bytes.sample_rate, 16000);
  EXPECT_EQ(from_bytes.samples, from_file.samples);
  const std::string message = test::error_of([] { decode_audio("not audio at all", "request body"); });
  EXPECT_NE(message.find("request body: not an audio file"), std::string::npos) << message;
}

// Each failure names the file and says what is wrong with it.
void expect_error(const std::function<void()>& action, const std::string& path, const std::string& reason) {
  const std::string message = test::error_of(action);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find(reason), std::string::npos) << "wanted '" << reason << "' in: " << message;
}

TEST(AudioFile, BadFilesAreErrorsNamingTheFile) {
  test::TempDir dir;
  const std::string missing = dir.path("missing.wav");
  expect_error([&] { read_audio(missing); }, missing, "no such file");
  expect_error([&] { read_audio(dir.root().string()); }, dir.root().string(), "folder");
  const std::string loop = dir.path("loop.wav");
  std::filesystem::create_symlink(loop, loop);  // a link to itself
  expect_error([&] { read_audio(loop); }, loop, "cannot read audio: Too many levels of symbolic links");

  const std::string text = dir.write("notes.wav", "this is a text file, not audio\n");
  expect_error([&] { read_audio(text); }, text, "not an audio file");

  const std::string empty = dir.path("empty.wav");
  write_wav(empty, {}, 16000);  // a header and no frames
  expect_error([&] { read_audio(empty); }, empty, "empty");

  // A WAV cut short in its data chunk: the header still announces 16000 frames.
  const std::string whole = dir.path("whole.wav");
  write_wav(whole, sine(440.0, 0.5, 16000, 16000), 16000);
  const std::string bytes = test::read_file(whole);
  const std::string truncated = dir.write("truncated.wav", bytes.substr(0, bytes.size() - 10000));
  expect_error([&] { read_audio(truncated); }, truncated, "truncated");
  expect_error([&] { decode_audio(bytes.substr(0, bytes.size() - 1), "upload.wav"); }, "upload.wav", "truncated");

  // A FLAC file cut short decodes fewer frames than its STREAMINFO announces.
  const std::string flac = dir.path("whole.flac");
  write_with_libsndfile(flac, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 1, 16000, sine(440.0, 0.5, 16000, 16000));
  const std::string flac_bytes = test::read_file(flac);
  const std::string cut_flac = dir.write("cut.flac", flac_bytes.substr(0, flac_bytes.size() / 2));
  expect_error([&] { read_audio(cut_flac); }, cut_flac, "truncated");
  // One damaged mid-file, whole in length, is not called truncated: its decoder names the damage.
  std::string flipped_bytes = flac_bytes;
  for (size_t i = flipped_bytes.size() / 2; i < flipped_bytes.size() / 2 + 200; ++i) flipped_bytes[i] ^= '\xFF';
  const std::string flipped = dir.write("flipped.flac", flipped_bytes);
  expect_error([&] { read_audio(flipped); }, flipped, "damaged: decoding stopped after ");
  expect_error([&] { read_audio(flipped); }, flipped, " of the 16000 frames its header announces (libsndfile: FLAC__");

  AudioReadOptions limits;
  limits.min_seconds = 1.5;
  expect_error([&] { read_audio(whole, limits); }, whole, "too short");
  limits.min_seconds = 0.5;
  limits.max_seconds = 0.75;
  expect_error([&] { read_audio(whole, limits); }, whole, "too long");
  limits.max_seconds = 1.0;
  EXPECT_EQ(read_audio(whole, limits).samples.size(), 16000u);
  // The limits apply after resampling: 1 s at 16 kHz is still 1 s at 8 kHz.
  limits.sample_rate = 8000;
  limits.max_seconds = 0.99;
  expect_error([&] { read_audio(whole, limits); }, whole, "too long");

  // A header with an absurd rate (1 Hz made 100 samples into 100 s of made-up words), and a device
  // that never ends (/dev/zero filled 16 GB before std::bad_alloc named nothing).
  const std::string slow = dir.path("one_hertz.wav");
  write_with_libsndfile(slow, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1, 1, sine(0.1, 0.5, 1, 100));
  expect_error([&] { read_audio(slow); }, slow, "its header says 1 channels at 1 Hz (damaged");
  AudioReadOptions small;
  small.max_file_bytes = 4 << 20;
  expect_error([&] { read_audio("/dev/zero", small); }, "/dev/zero", "cannot read audio: more than 4 MiB");
  EXPECT_EQ(read_audio(whole, small).samples.size(), 16000u);  // 32 KB: read
  small.max_file_bytes = 1 << 20;
  const std::string big = dir.path("big.wav");
  write_wav(big, sine(440.0, 0.5, 16000, 600000), 16000);  // 1.2 MB: refused by its size, unread
  expect_error([&] { read_audio(big, small); }, big, "more than 1 MiB");
  EXPECT_EQ(kMaxAudioFileBytes, int64_t{1} << 30);
  EXPECT_EQ(AudioReadOptions().max_file_bytes, kMaxAudioFileBytes);
}

// A segment (NeMo's "offset", "duration") is the file's own frames from the offset on, cut before
// resampling; its length is what the limits see; one that starts or ends past the file is an error.
TEST(AudioFile, ReadsASegmentOfAFile) {
  test::TempDir dir;
  const std::string path = dir.path("one_second.wav");
  write_wav(path, sine(440.0, 0.5, 16000, 16000), 16000);
  const auto whole = read_audio(path).samples;
  AudioReadOptions segment;
  segment.offset_seconds = 0.25;
  segment.duration_seconds = 0.5;
  const auto cut = read_audio(path, segment).samples;
  ASSERT_EQ(cut.size(), 8000u);
  EXPECT_TRUE(std::equal(cut.begin(), cut.end(), whole.begin() + 4000));
  segment.duration_seconds = 0;  // to the end
  EXPECT_EQ(read_audio(path, segment).samples.size(), 12000u);
  segment.sample_rate = 8000;  // cut at 16 kHz, then resampled
  EXPECT_EQ(read_audio(path, segment).samples.size(), 6000u);
  segment.sample_rate = 16000;
  segment.max_seconds = 0.7;  // the limits see the segment (0.75 s), not the file
  expect_error([&] { read_audio(path, segment); }, path, "too long: 0.75 s");
  segment.max_seconds = 0;
  segment.duration_seconds = 1.05 - 0.25;  // a duration written a little long: to the end
  EXPECT_EQ(read_audio(path, segment).samples.size(), 12000u);
  segment.duration_seconds = 0.9;  // 0.15 s past the end
  expect_error([&] { read_audio(path, segment); }, path, "the segment 0.25 s + 0.9 s ends after the file (1 s)");
  segment.offset_seconds = 1.0;
  segment.duration_seconds = 0;
  expect_error([&] { read_audio(path, segment); }, path, "the segment's offset 1 s is at or past the end of the file (1 s)");
}

// A float file may hold anything: a NaN, an infinity or an absurd value is refused, naming the
// file, the frame and its time (and the channel), where it once became features of NaN and a
// transcript of nothing in particular; integer-scaled floats (+-30,000) are read as they are.
TEST(AudioFile, DamagedSamplesAreErrorsNamingTheFrame) {
  test::TempDir dir;
  const int float_wav = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
  auto samples = sine(440.0, 0.5, 16000, 16000);
  samples[5000] = std::nanf("");
  const std::string nan_file = dir.path("nan.wav");
  write_with_libsndfile(nan_file, float_wav, 1, 16000, samples);
  expect_error([&] { read_audio(nan_file); }, nan_file,
               "damaged audio: frame 5000 (0.3125 s) holds a sample that is not a number (NaN)");
  expect_error([&] { decode_audio(test::read_file(nan_file), "upload.wav"); }, "upload.wav", "frame 5000");

  std::vector<float> stereo(2 * 1600, 0.25f);
  stereo[2 * 100 + 1] = std::numeric_limits<float>::infinity();  // frame 100, the second channel
  const std::string inf_file = dir.path("inf.wav");
  write_with_libsndfile(inf_file, float_wav, 2, 16000, stereo);
  expect_error([&] { read_audio(inf_file); }, inf_file,
               "frame 100 (0.00625 s, channel 2) holds a sample that is infinite");

  samples = sine(440.0, 0.5, 16000, 16000);
  samples[7] = 1e30f;
  const std::string huge_file = dir.path("huge.wav");
  write_with_libsndfile(huge_file, float_wav, 1, 16000, samples);
  expect_error([&] { read_audio(huge_file); }, huge_file,
               "frame 7 (0.0004375 s) holds a sample of 1e+30, beyond +-1e+12");

  const auto scaled = sine(440.0, 30000.0, 16000, 16000);
  const std::string scaled_file = dir.path("scaled.wav");
  write_with_libsndfile(scaled_file, float_wav, 1, 16000, scaled);
  const Audio read = read_audio(scaled_file);
  EXPECT_EQ(read.samples, scaled);
}

// min_samples (what a recognizer's features need) is checked after resampling, naming the file.
TEST(AudioFile, FilesTooShortForTheFeaturesAreErrorsNamingTheFile) {
  test::TempDir dir;
  const std::string path = dir.path("blip.wav");
  write_wav(path, sine(440.0, 0.5, 16000, 400), 16000);
  AudioReadOptions options;
  options.min_samples = 257;
  EXPECT_EQ(read_audio(path, options).samples.size(), 400u);
  options.sample_rate = 8000;  // 400 samples at 16 kHz are 200 at 8 kHz
  expect_error([&] { read_audio(path, options); }, path,
               "too short for the model's features: 200 samples (25 ms at 8000 Hz), fewer than the 257 they need");
}

}  // namespace
}  // namespace mixseq
