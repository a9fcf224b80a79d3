// Speech batches from a prepared split, with features computed per batch or taken from a
// SpeechFeatureCache (speech.cache_features): the same tensors either way, SpecAugment drawn the
// same from the same generator, the cache never masked, and caching refused with speed perturbation.
#include "mixseq/data/speech_batch.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

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

// Each skipped utterance is counted under its own reason: too short, too long, unreadable (a text
// file, a float file holding a NaN). Until 2026-12-06 the length limits' messages lacked the words
// prepare looked for, and every skip was counted as unreadable audio.
TEST(SpeechPrepare, CountsEachSkipUnderItsReason) {
  test::TempDir dir;
  const auto tone = [](int64_t n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 0.3f * static_cast<float>(std::sin(0.05 * i));
    return x;
  };
  write_wav(dir.path("ok.wav"), tone(8000), 16000);      // 0.5 s
  write_wav(dir.path("short.wav"), tone(800), 16000);    // 0.05 s
  write_wav(dir.path("long.wav"), tone(48000), 16000);   // 3 s
  dir.write("text.wav", "not audio\n");
  auto damaged = tone(8000);
  damaged[100] = std::nanf("");
  write_audio(dir.path("ok.flac"), tone(8000), 16000);    // kept, as ok.wav
  {  // a 32-bit float WAV, written byte by byte: RIFF header, fmt chunk (format 3: IEEE float), data
    std::string bytes;
    const auto u32 = [&](uint32_t v) { for (int k = 0; k < 4; ++k) bytes += static_cast<char>((v >> (8 * k)) & 0xFF); };
    const auto u16 = [&](uint16_t v) { for (int k = 0; k < 2; ++k) bytes += static_cast<char>((v >> (8 * k)) & 0xFF); };
    const auto data_bytes = static_cast<uint32_t>(4 * damaged.size());
    bytes += "RIFF";
    u32(36 + data_bytes);
    bytes += "WAVEfmt ";
    u32(16), u16(3), u16(1), u32(16000), u32(16000 * 4), u16(4), u16(32);
    bytes += "data";
    u32(data_bytes);
    bytes.append(reinterpret_cast<const char*>(damaged.data()), data_bytes);
    dir.write("nan.wav", bytes);
  }
  SpeechPrepareOptions options;
  options.manifests["train"] = dir.write(
      "train.tsv", "ok.wav\tone\nshort.wav\ttwo\nlong.wav\tthree\ntext.wav\tfour\nnan.wav\tfive\nok.flac\tsix\n");
  options.out_dir = dir.path("data");
  options.min_seconds = 0.1;
  options.max_seconds = 2.0;
  const auto report = prepare_speech_data(options).at("train");
  EXPECT_EQ(report.utterances, 2);
  const std::map<std::string, int64_t> expected = {
      {"shorter than min_seconds", 1}, {"longer than max_seconds", 1}, {"unreadable audio", 2}};
  EXPECT_EQ(report.skipped, expected);
}

// Manifest lines that would pair audio with the wrong transcript, or transcripts with the wrong
// manifest line, are errors naming the line (a hostile-input sweep, 2026-12-07).
TEST(SpeechManifest, RefusesWhatWouldMisalignOrMispairItsLines) {
  test::TempDir dir;
  const auto error = [&](const std::string& name, const std::string& text, bool need_transcripts = true) {
    const std::string path = dir.write(name, text);
    return test::error_of([&] { read_speech_manifest(path, need_transcripts); });
  };
  EXPECT_EQ(error("mid.tsv", "a.wav\tone\n\nb.wav\ttwo\n"),
            dir.path("mid.tsv") + ":2: a blank line between entries (transcripts are written one per manifest "
                                  "line; remove it)");
  EXPECT_EQ(error("three.tsv", "a.wav\tone\tand more\n"),
            dir.path("three.tsv") + ":1: more than two tab-separated columns; expected `audio<TAB>transcript`");
  EXPECT_EQ(error("seg.json", "{\"audio_filepath\": \"a.wav\", \"text\": \"one\", \"offset\": -0.5}\n"),
            dir.path("seg.json") + ":1: \"offset\" must be a number of seconds, 0 or more, not -0.5");
  EXPECT_EQ(error("dur.json", "{\"audio_filepath\": \"a.wav\", \"text\": \"one\", \"duration\": \"2\"}\n"),
            dir.path("dur.json") + ":1: \"duration\" must be a number of seconds, 0 or more, not \"2\"");
  EXPECT_EQ(error("nul.json", "{\"audio_filepath\": \"a\\u0000.wav\"}\n", false),
            dir.path("nul.json") + ":1: the audio path holds a NUL character");

  // What stays allowed: blank lines at the end, a zero offset, a third column where no transcript
  // is read (transcribe ignores the second), a byte order mark before the first line.
  const std::string ok = dir.write("ok.json", "\xEF\xBB\xBF{\"audio_filepath\": \"a.wav\", \"text\": \"one\", \"offset\": 0, "
                                              "\"duration\": 1.5}\n{\"audio_filepath\": \"b.wav\", \"text\": \"two\"}\n\n\n");
  const auto entries = read_speech_manifest(ok, true);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].audio, dir.path("a.wav"));
  EXPECT_EQ(entries[0].duration, 1.5);
  EXPECT_EQ(entries[1].transcript, "two");
  EXPECT_EQ(entries[1].offset, 0.0);
  EXPECT_EQ(entries[1].duration, 0.0);
  EXPECT_EQ(read_speech_manifest(dir.write("cols.tsv", "a.wav\tx\ty\n"), false).size(), 1u);
}

// NeMo's segments: "offset" and "duration" cut each utterance out of its file (until 2026-12-07
// they were ignored, and a segment's transcript was stored against the whole file).
TEST(SpeechPrepare, ReadsNemoSegmentsOfAFile) {
  test::TempDir dir;
  std::vector<float> tone(16000);  // 1 s at 16 kHz
  for (size_t i = 0; i < tone.size(); ++i) tone[i] = 0.3f * static_cast<float>(std::sin(0.05 * static_cast<double>(i)));
  write_wav(dir.path("long.wav"), tone, 16000);
  SpeechPrepareOptions options;
  options.manifests["train"] = dir.write(
      "train.json",
      "{\"audio_filepath\": \"long.wav\", \"text\": \"one\", \"offset\": 0.25, \"duration\": 0.5}\n"
      "{\"audio_filepath\": \"long.wav\", \"text\": \"two\", \"offset\": 0.75}\n"
      "{\"audio_filepath\": \"long.wav\", \"text\": \"three\", \"duration\": 1.04}\n");  // its length, rounded up
  options.out_dir = dir.path("data");
  const auto report = prepare_speech_data(options).at("train");
  EXPECT_EQ(report.utterances, 3);
  EXPECT_EQ(test::read_file(dir.path("data/train.tsv")),
            "8000\t" + dir.path("long.wav") + "\tone\n4000\t" + dir.path("long.wav") + "\ttwo\n16000\t" +
                dir.path("long.wav") + "\tthree\n");
  // The samples are the file's own, from the offset on.
  const std::string pcm = test::read_file(dir.path("data/train.pcm"));
  ASSERT_EQ(pcm.size(), 2u * (8000 + 4000 + 16000));
  int16_t first = 0;
  std::memcpy(&first, pcm.data(), sizeof first);
  EXPECT_EQ(first, static_cast<int16_t>(std::lround(tone[4000] * 32767.0f)));
}

// prepare -o into the manifests' own folder would have replaced train.tsv by the prepared one;
// an output that is an utterance's audio would have replaced the recording.
TEST(SpeechPrepare, RefusesToWriteOverItsInputs) {
  test::TempDir dir;
  std::vector<float> tone(8000);
  for (size_t i = 0; i < tone.size(); ++i) tone[i] = 0.3f * static_cast<float>(std::sin(0.05 * static_cast<double>(i)));
  write_wav(dir.path("ok.wav"), tone, 16000);
  const std::string manifest_text = "ok.wav\tone\n";
  SpeechPrepareOptions options;
  options.manifests["train"] = dir.write("train.tsv", manifest_text);
  options.out_dir = dir.root().string();
  const auto error = test::error_of([&] { prepare_speech_data(options); });
  EXPECT_EQ(error.rfind("-o '" + dir.path("train.tsv") + "' is the same file as the train manifest", 0), 0u) << error;
  EXPECT_EQ(test::read_file(dir.path("train.tsv")), manifest_text);  // left as it was

  // A recording named as an output of its split (train.pcm: raw samples libsndfile would not read,
  // but its name is enough to lose it).
  options.manifests["train"] = dir.write("in/train.tsv", "../ok.wav\tone\n");
  options.manifests["valid"] = dir.write("in/valid.tsv", "../valid.tsv\tone\n");
  dir.write("valid.tsv", "not audio");
  const auto over_audio = test::error_of([&] { prepare_speech_data(options); });
  EXPECT_NE(over_audio.find("is the same file as " + dir.path("in/valid.tsv") + ":1's audio"), std::string::npos)
      << over_audio;

  options.manifests = {{"train", dir.path("in/train.tsv")}};
  options.out_dir = dir.path("data");
  options.min_seconds = 2.0;
  options.max_seconds = 1.0;
  EXPECT_EQ(test::error_of([&] { prepare_speech_data(options); }),
            "prepare: --min-seconds (2) must be at most --max-seconds (1), and neither negative; 0 turns either off");
  options.min_seconds = 2.0;
  options.max_seconds = 0;  // the only utterance (0.5 s) is too short: the error says so
  EXPECT_EQ(test::error_of([&] { prepare_speech_data(options); }),
            "prepare: the train manifest (" + dir.path("in/train.tsv") +
                ") kept no utterance (1 read; skipped: 1 shorter than min_seconds)");
  EXPECT_FALSE(std::filesystem::exists(dir.path("data")));  // nothing half-written is left
  // Over a prepared folder: a validation manifest that keeps nothing, after the training split was
  // read and written, leaves the earlier dataset whole (it was replaced split by split).
  options.min_seconds = 0;
  prepare_speech_data(options);
  const std::string samples = test::read_file(dir.path("data/train.pcm"));
  const std::string manifest = test::read_file(dir.path("data/dataset.json"));
  options.manifests["train"] = dir.write("in/train2.tsv", "../ok.wav\ttwo\n../ok.wav\tthree\n");
  options.manifests["valid"] = dir.write("in/valid2.tsv", "../ok.wav\tone\n");
  options.max_seconds = 0.25;  // keeps neither split's utterances: the first split read fails
  EXPECT_NE(test::error_of([&] { prepare_speech_data(options); }).find("kept no utterance"), std::string::npos);
  options.max_seconds = 0;
  options.manifests["valid"] = dir.write("in/valid2.tsv", "../ok.wav\t\xE6\x97\xA5\n");  // no symbol kept
  const auto valid = test::error_of([&] { prepare_speech_data(options); });
  EXPECT_NE(valid.find("the valid manifest"), std::string::npos) << valid;
  EXPECT_EQ(test::read_file(dir.path("data/train.pcm")), samples);
  EXPECT_EQ(test::read_file(dir.path("data/dataset.json")), manifest);
  options.manifests = {{"train", dir.path("in/train.tsv")}};
  options.min_seconds = 0.1;
  options.sample_rate = 1000000000;
  EXPECT_EQ(test::error_of([&] { prepare_speech_data(options); }),
            "prepare: the sample rate (1000000000 Hz) is outside 1000 to 384000 Hz");
}

// Stored samples are 16-bit: audio within +-1 is rounded to the nearest step, as always; an
// utterance that peaks beyond (integer-scaled float samples) is scaled down by its peak, where it
// used to be clipped into a square wave.
TEST(SpeechStoredSamples, ScaleAnUtteranceThatPeaksBeyondOneInsteadOfClippingIt) {
  std::vector<float> quiet(1000), loud(1000);
  for (size_t i = 0; i < quiet.size(); ++i) {
    quiet[i] = 0.5f * static_cast<float>(std::sin(0.03 * static_cast<double>(i)));
    loud[i] = 60000.0f * quiet[i];  // peaks near 30,000
  }
  float peak = 0.0f;
  for (const float x : loud) peak = std::max(peak, std::abs(x));
  const auto stored_quiet = as_stored_samples(quiet), stored_loud = as_stored_samples(loud);
  for (size_t i = 0; i < quiet.size(); ++i) {
    EXPECT_NEAR(stored_quiet[i], quiet[i] * 32767.0f / 32768.0f, 0.6f / 32768.0f) << i;
    EXPECT_NEAR(stored_loud[i], loud[i] / peak * 32767.0f / 32768.0f, 0.6f / 32768.0f) << i;
  }
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
  config.vtlp = {0.9, 1.1};
  EXPECT_NE(test::error_of([&] { config.check(); }).find("speech.vtlp"), std::string::npos);
}

TEST(SpeechInputConfig, VtlpRangesAreChecked) {
  SpeechInputConfig config;
  for (const std::vector<double>& bad : std::vector<std::vector<double>>{{1.1, 0.9}, {0.4, 1.0}, {0.9, 2.5}, {1.0}}) {
    config.vtlp = bad;
    EXPECT_NE(test::error_of([&] { config.check(); }).find("speech.vtlp must be"), std::string::npos);
  }
  config.vtlp = {0.9, 1.1};
  EXPECT_NO_THROW(config.check());
  // The band's cut-offs (100 Hz and sample_rate / 2 - 500 Hz) leave no straight part at 1.2 kHz for
  // warp 1.1 (110 to 100 Hz) nor for 0.9 (100 to 90 Hz); at 2 kHz it runs 110-500 and 100-450 Hz.
  for (const int64_t rate : {1200, 2000}) {
    config.sample_rate = rate;
    config.n_fft = 64;
    config.n_mels = 8;
    config.window_ms = 20;
    config.hop_ms = 10;
    const std::string error = test::error_of([&] { config.check(); });
    if (rate == 1200)
      EXPECT_NE(error.find("speech.vtlp: warp 0.9 needs a wider band than speech.sample_rate 1200"), std::string::npos)
          << error;
    else
      EXPECT_EQ(error, "") << error;
  }
  config = SpeechInputConfig{};
  config.vtlp = {0.9, 1.1};
  config.features = "log_spectrogram";
  config.n_fft = 320;
  EXPECT_NE(test::error_of([&] { config.check(); }).find("log_spectrogram"), std::string::npos);
}

// A warp drawn for each training utterance: the batch changes, follows the generator's seed, leaves
// the frames alone, and [1, 1] draws nothing and warps nothing.
TEST(SpeechBatch, VtlpWarpsTrainingUtterancesOnly) {
  test::TempDir dir;
  const SpeechData data(prepare_split(dir));
  const SpeechSplit& split = data.split("train");
  const std::vector<int64_t> indices = {0, 1, 2};
  SpeechInputConfig config;
  config.dither = 0;
  auto seeded = [](uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); };
  auto g0 = seeded(5);
  const auto plain = make_speech_batch(split, indices, config, &g0);
  config.vtlp = {1.0, 1.0};
  auto g1 = seeded(5);
  EXPECT_TRUE(torch::equal(make_speech_batch(split, indices, config, &g1).features, plain.features));
  config.vtlp = {0.8, 1.2};
  auto g2 = seeded(5), g3 = seeded(5), g4 = seeded(6);
  const auto warped = make_speech_batch(split, indices, config, &g2);
  EXPECT_TRUE(torch::equal(warped.lengths, plain.lengths));
  EXPECT_FALSE(torch::allclose(warped.features, plain.features));
  EXPECT_TRUE(torch::equal(make_speech_batch(split, indices, config, &g3).features, warped.features));
  EXPECT_FALSE(torch::equal(make_speech_batch(split, indices, config, &g4).features, warped.features));
  // Each utterance is warped by its own factor, min + u (max - min) with u the first draw of its own
  // generator, seeded from the batch's (no other draws here: no speed perturbation, dither or
  // SpecAugment).
  auto replay = seeded(5);
  const std::vector<uint64_t> seeds = utterance_seeds(replay, 3);
  for (int64_t b = 0; b < 3; ++b) {
    SpeechFeatureOptions options = config.feature_options();
    auto own = seeded(seeds[static_cast<size_t>(b)]);
    options.vtlp_warp = 0.8 + torch::rand({1}, own).item<double>() * 0.4;
    const auto expected = speech_features(split.audio(indices[static_cast<size_t>(b)]), options);
    EXPECT_TRUE(torch::equal(warped.features[b].narrow(0, 0, expected.size(0)), expected)) << "utterance " << b;
  }
  const auto validation = make_speech_batch(split, indices, config, nullptr);
  config.vtlp = {};
  EXPECT_TRUE(torch::equal(make_speech_batch(split, indices, config, nullptr).features, validation.features));
}

// The utterances are computed side by side on the intra-op threads, each from its own generator:
// with every kind of augmentation on, a batch is the same at one thread and at two, and each
// utterance is what make_speech_batch gives for it alone from its generator's seed.
TEST(SpeechBatch, IsTheSameAtAnyThreadCount) {
  test::TempDir dir;
  const SpeechData data(prepare_split(dir));
  const SpeechSplit& split = data.split("train");
  const std::vector<int64_t> indices = {1, 2, 0};
  SpeechInputConfig config = augmented_config();
  config.dither = 1e-3;
  config.speed_perturbation = {0.9, 1.1};
  config.vtlp = {0.9, 1.1};
  const int threads = at::get_num_threads();
  std::vector<SpeechBatch> batches;
  for (const int count : {1, 2, 1, 2}) {
    at::set_num_threads(count);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(21);
    batches.push_back(make_speech_batch(split, indices, config, &generator));
  }
  at::set_num_threads(threads);
  for (size_t i = 1; i < batches.size(); ++i) {
    EXPECT_TRUE(torch::equal(batches[i].features, batches[0].features)) << "batch " << i;
    EXPECT_TRUE(torch::equal(batches[i].lengths, batches[0].lengths)) << "batch " << i;
  }
  // Each utterance from its own generator: speed, then the VTLP warp, then dither, then SpecAugment.
  auto replay = at::make_generator<at::CPUGeneratorImpl>(21);
  const std::vector<uint64_t> seeds = utterance_seeds(replay, 3);
  for (size_t u = 0; u < 3; ++u) {
    auto own = at::make_generator<at::CPUGeneratorImpl>(seeds[u]);
    const double factor = 0.9 + torch::rand({1}, own).item<double>() * 0.2;
    const auto samples = change_speed(split.audio(indices[u]), factor, config.sample_rate);
    SpeechFeatureOptions options = config.feature_options();
    options.vtlp_warp = 0.9 + torch::rand({1}, own).item<double>() * 0.2;
    torch::Tensor expected = speech_features(samples, options, own);
    spec_augment(expected, config.spec_augment(), own);
    const auto b = static_cast<int64_t>(u);
    EXPECT_EQ(batches[0].lengths[b].item<int64_t>(), expected.size(0)) << "utterance " << u;
    EXPECT_TRUE(torch::equal(batches[0].features[b].narrow(0, 0, expected.size(0)), expected)) << "utterance " << u;
  }
}

}  // namespace
}  // namespace mixseq
