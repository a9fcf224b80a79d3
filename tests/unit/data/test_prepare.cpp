#include "mixseq/data/prepare.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "mixseq/data/prepared_data.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

using test::TempDir;
using test::write_lines;


PrepareOptions parallel_options(const TempDir& dir) {
  PrepareOptions options;
  options.train_prefix = dir.path("train");
  options.output_dir = dir.path("data");
  options.vocabulary_options.pad_to_multiple = 1;
  return options;
}

std::vector<std::string> decoded(const PreparedData& data, const TokenDataset& side, int64_t i) {
  return data.vocabulary().decode(side.sequence(i));
}

TEST(Prepare, WritesDatasetsThatDecodeBackToThePieces) {
  TempDir dir;
  write_lines(dir.path("train.en"), {"a b c", "b  c", "c"});
  write_lines(dir.path("train.de"), {"x y", "y", "z z z"});
  write_lines(dir.path("valid.en"), {"a d"});
  write_lines(dir.path("valid.de"), {"x"});
  auto options = parallel_options(dir);
  options.valid_prefix = dir.path("valid");
  const auto report = prepare_corpus(options);
  ASSERT_EQ(report.splits.size(), 2u);
  EXPECT_EQ(report.splits[0].kept, 3);
  EXPECT_EQ(report.splits[0].source_tokens, 6);
  EXPECT_EQ(report.splits[0].target_tokens, 6);
  EXPECT_EQ(report.splits[1].unknown_tokens, 1);  // "d" is not in the training text
  EXPECT_EQ(report.vocabulary_size, 4 + 6);        // specials + a b c x y z

  const PreparedData data(options.output_dir);
  EXPECT_EQ(data.source_lang(), "en");
  EXPECT_EQ(data.tokenizer(), "none");
  EXPECT_EQ(decoded(data, data.source("train"), 1), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(decoded(data, data.target("train"), 2), (std::vector<std::string>{"z", "z", "z"}));
  EXPECT_EQ(decoded(data, data.source("valid"), 0), (std::vector<std::string>{"a", "<unk>"}));
  EXPECT_FALSE(data.has_split("test"));
  EXPECT_EQ(data.references_path("train"), "");
  EXPECT_EQ(test::read_file(data.references_path("valid")), "x\n");
}

TEST(Prepare, AnUnpaddedVocabularyIsNotedWhereTrainingStarts) {
  TempDir dir;
  write_lines(dir.path("train.en"), {"a b c"});
  write_lines(dir.path("train.de"), {"x y z"});
  auto options = parallel_options(dir);  // no padding: 4 specials + 6 words
  prepare_corpus(options);
  testing::internal::CaptureStderr();
  PreparedData(options.output_dir).note_unpadded_vocabulary();
  const auto unpadded = testing::internal::GetCapturedStderr();
  EXPECT_NE(unpadded.find("'" + options.output_dir + "' has 10 entries, not a multiple of 8"), std::string::npos)
      << unpadded;

  options.output_dir = dir.path("padded");
  options.vocabulary_options.pad_to_multiple = 8;  // 10 -> 16
  prepare_corpus(options);
  testing::internal::CaptureStderr();
  PreparedData(options.output_dir).note_unpadded_vocabulary();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Prepare, DropsUselessTrainingPairsAndSaysWhy) {
  TempDir dir;
  write_lines(dir.path("train.en"), {"a b", "", "a a a a a a", "a", "caf\xC3\xA9", "\xE2\x82\xAC", "b"});
  write_lines(dir.path("train.de"), {"x", "x", "x", "x x x x x", "y", "y", "  "});
  auto options = parallel_options(dir);
  options.max_length = 5;
  options.max_length_ratio = 3;
  options.drop_non_latin1 = true;
  const auto report = prepare_corpus(options);
  const auto& train = report.splits[0];
  EXPECT_EQ(train.lines, 7);
  EXPECT_EQ(train.kept, 2);  // "a b" and "café" (é is Latin-1)
  EXPECT_EQ(train.dropped.at("empty line"), 2);
  EXPECT_EQ(train.dropped.at("too long"), 1);
  EXPECT_EQ(train.dropped.at("length ratio"), 1);
  EXPECT_EQ(train.dropped.at("not Latin-1"), 1);
  ASSERT_FALSE(train.examples.empty());
  EXPECT_NE(format_prepare_report(report).find(dir.path("train.en") + ":2: empty line"), std::string::npos);
}

TEST(Prepare, EvaluationSplitsKeepEveryLine) {
  TempDir dir;
  write_lines(dir.path("train.en"), {"a"});
  write_lines(dir.path("train.de"), {"x"});
  write_lines(dir.path("test.en"), {"a", "", "a a a a"});
  write_lines(dir.path("test.de"), {"x", "x", "x"});
  auto options = parallel_options(dir);
  options.test_prefix = dir.path("test");
  options.max_length = 3;
  const auto report = prepare_corpus(options);
  EXPECT_EQ(report.splits[1].kept, 3);
  EXPECT_EQ(report.splits[1].flagged.at("empty line"), 1);
  EXPECT_EQ(report.splits[1].flagged.at("too long"), 1);
  EXPECT_EQ(PreparedData(options.output_dir).source("test").length(1), 0);
}

TEST(Prepare, RejectsBadInputWithFileAndLine) {
  TempDir dir;
  auto options = parallel_options(dir);
  write_lines(dir.path("train.en"), {"a", "b", "c"});
  write_lines(dir.path("train.de"), {"x", "y"});
  const auto mismatch = error_of([&] { prepare_corpus(options); });
  EXPECT_NE(mismatch.find("has 3 lines"), std::string::npos) << mismatch;
  EXPECT_NE(mismatch.find("has 2"), std::string::npos) << mismatch;

  write_lines(dir.path("train.de"), {"x", "y\xC3", "z"});
  const auto malformed = error_of([&] { prepare_corpus(options); });
  EXPECT_NE(malformed.find(dir.path("train.de") + ":2: malformed UTF-8 at byte 2"), std::string::npos) << malformed;

  options.drop_malformed_utf8 = true;
  EXPECT_EQ(prepare_corpus(options).splits[0].dropped.at("malformed UTF-8"), 1);

  // An empty validation split (training measured "loss 0 | ppl 1" on it, and kept that checkpoint).
  options.drop_malformed_utf8 = false;
  write_lines(dir.path("train.de"), {"x", "y", "z"});
  write_lines(dir.path("empty.en"), {});
  write_lines(dir.path("empty.de"), {});
  options.valid_prefix = dir.path("empty");
  EXPECT_EQ(error_of([&] { prepare_corpus(options); }), "prepare: the valid split is empty: '" + dir.path("empty.en") +
                                                            "' and '" + dir.path("empty.de") + "' hold no lines");
  options.valid_prefix.clear();

  options.target_lang = options.source_lang;  // the same file for both sides
  EXPECT_NE(error_of([&] { prepare_corpus(options); }).find("--source-lang and --target-lang are both 'en'"),
            std::string::npos);
  options.target_lang = "de";

  options.train_prefix = dir.path("missing");
  EXPECT_NE(error_of([&] { prepare_corpus(options); }).find("missing.en"), std::string::npos);
}

TEST(Prepare, NamesTheFirstMalformedLineWhateverThreadMeetsOneFirst) {
  TempDir dir;
  auto options = parallel_options(dir);
  std::vector<std::string> source(200, "a"), target(200, "x");
  source[98] = "b\xC3";   // line 99, the end of the first thread's share
  target[100] = "y\xC3";  // line 101, the start of the second's: usually met first
  write_lines(dir.path("train.en"), source);
  write_lines(dir.path("train.de"), target);
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  for (int round = 0; round < 5; ++round) {
    const auto message = error_of([&] { prepare_corpus(options); });
    EXPECT_NE(message.find(dir.path("train.en") + ":99: malformed UTF-8"), std::string::npos) << message;
  }
  at::set_num_threads(threads);
}

TEST(Prepare, DetectsDatasetsOfAnotherVocabulary) {
  TempDir dir;
  write_lines(dir.path("train.en"), {"a b"});
  write_lines(dir.path("train.de"), {"x"});
  auto options = parallel_options(dir);
  prepare_corpus(options);
  write_lines(dir.path("train.de"), {"w"});
  options.output_dir = dir.path("other");
  prepare_corpus(options);
  std::filesystem::copy_file(dir.path("other/vocab.txt"), dir.path("data/vocab.txt"),
                             std::filesystem::copy_options::overwrite_existing);
  const auto message = error_of([&] { PreparedData{dir.path("data")}; });
  EXPECT_NE(message.find("another vocabulary"), std::string::npos) << message;
}

// A folder of another task's data names its kind and the command that wrote it (it said "not a
// mixseq dataset manifest").
TEST(Prepare, AnotherTasksFolderIsNamedAsSuch) {
  TempDir dir;
  write_lines(dir.path("train.en"), {"a b"});
  write_lines(dir.path("train.de"), {"x"});
  prepare_corpus(parallel_options(dir));  // a folder whose manifest is then another task's
  const std::string manifest = dir.path("data/dataset.json");
  test::write_file(manifest, R"({"kind": "classification", "version": 1})");
  EXPECT_EQ(error_of([&] { PreparedData{dir.path("data")}; }),
            "'" + manifest + "' is a classification dataset, written by `mixseq prepare --task classify`; "
            "translation and language models train on text prepared by `mixseq prepare` (--task text)");
  test::write_file(manifest, R"({"kind": "speech", "version": 1})");
  const auto speech = error_of([&] { PreparedData{dir.path("data")}; });
  EXPECT_NE(speech.find("is a speech dataset, written by `mixseq prepare --task speech`"), std::string::npos) << speech;
  test::write_file(manifest, "[1, 2]");
  EXPECT_EQ(error_of([&] { PreparedData{dir.path("data")}; }), "'" + manifest + "' is not a mixseq dataset manifest");
}

// A flipped byte that leaves a valid id passes every structural check; the checksum in
// dataset.json catches it. Manifests without checksums (older mixseq) still open.
TEST(Prepare, DetectsACorruptDatasetByItsChecksum) {
  TempDir dir;
  write_lines(dir.path("train.en"), {"a b c", "b c"});
  write_lines(dir.path("train.de"), {"x y", "y"});
  prepare_corpus(parallel_options(dir));
  const auto path = dir.path("data/train.en.bin");
  const std::string good = test::read_file(path);
  std::string flipped = good;
  flipped[64] ^= 1;  // the first token id (2 bytes): another word of the 10-entry vocabulary
  ASSERT_LT(static_cast<unsigned char>(flipped[64]), 10);
  test::write_file(path, flipped);
  const auto message = error_of([&] { PreparedData{dir.path("data")}; });
  EXPECT_NE(message.find("train.en.bin' is corrupt: its checksum is"), std::string::npos) << message;
  EXPECT_NE(message.find("run `mixseq prepare` again"), std::string::npos) << message;

  test::write_file(path, good);
  auto manifest = nlohmann::json::parse(test::read_file(dir.path("data/dataset.json")));
  ASSERT_TRUE(manifest["splits"]["train"].contains("target_checksum"));
  manifest["splits"]["train"].erase("source_checksum");
  manifest["splits"]["train"].erase("target_checksum");
  test::write_file(dir.path("data/dataset.json"), manifest.dump());
  EXPECT_NO_THROW(PreparedData{dir.path("data")});
}

TEST(Prepare, MonolingualCorpusKeepsEmptyLines) {
  TempDir dir;
  write_lines(dir.path("wiki.train.tokens"), {" = Title = ", "", " some text <unk> here"});
  PrepareOptions options;
  options.source_lang = "";
  options.target_lang = "";
  options.train_prefix = dir.path("wiki.train.tokens");
  options.output_dir = dir.path("lm");
  const auto report = prepare_corpus(options);
  EXPECT_EQ(report.splits[0].kept, 3);
  const PreparedData data(options.output_dir);
  EXPECT_TRUE(data.monolingual());
  EXPECT_EQ(data.source("train").lengths(), (std::vector<int64_t>{3, 0, 4}));
  // WikiText spells unknown words "<unk>": they become the vocabulary's own unknown id.
  EXPECT_EQ(data.source("train").sequence(2)[2], kUnkId);
  EXPECT_THROW(data.target("train"), Error);
}

// All or nothing, and never over an input: a validation split that fails after the training split
// was written leaves a prepared folder as it was (it kept a new vocabulary and training data beside
// the old manifest) and no fresh folder; a corpus named like an output in -o is refused; the
// folder's own tokenizer can prepare it again.
TEST(Prepare, AFailedRunLeavesTheFolderAsItWasAndNoOutputReplacesAnInput) {
  TempDir dir;
  write_lines(dir.path("train.en"), {"a b c", "b c"});
  write_lines(dir.path("train.de"), {"x y", "y"});
  write_lines(dir.path("valid.en"), {"a"});
  write_lines(dir.path("valid.de"), {"x"});
  write_lines(dir.path("bad.en"), {"a", "b \xFF"});
  write_lines(dir.path("bad.de"), {"x", "y"});
  auto options = parallel_options(dir);
  options.valid_prefix = dir.path("bad");
  options.output_dir = dir.path("fresh");
  EXPECT_NE(error_of([&] { prepare_corpus(options); }).find("bad.en:2: malformed UTF-8"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path("fresh")));

  options = parallel_options(dir);
  options.valid_prefix = dir.path("valid");
  prepare_corpus(options);
  const std::string vocabulary = test::read_file(dir.path("data/vocab.txt"));
  const std::string train = test::read_file(dir.path("data/train.en.bin"));
  const std::string manifest = test::read_file(dir.path("data/dataset.json"));
  write_lines(dir.path("other.en"), {"d e f g", "h"});
  write_lines(dir.path("other.de"), {"u v", "w"});
  options.train_prefix = dir.path("other");
  options.valid_prefix = dir.path("bad");
  EXPECT_NE(error_of([&] { prepare_corpus(options); }).find("bad.en:2: malformed UTF-8"), std::string::npos);
  EXPECT_EQ(test::read_file(dir.path("data/vocab.txt")), vocabulary);
  EXPECT_EQ(test::read_file(dir.path("data/train.en.bin")), train);
  EXPECT_EQ(test::read_file(dir.path("data/dataset.json")), manifest);
  EXPECT_EQ(PreparedData(dir.path("data")).source("train").size(), 2);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path("data")))
    EXPECT_TRUE(entry.is_regular_file()) << entry.path();  // no staging folder left

  // A monolingual corpus that happens to be called vocab.txt, prepared into its own folder.
  test::write_file(dir.path("corpus/vocab.txt"), "one two\nthree\n");
  PrepareOptions lm;
  lm.source_lang = lm.target_lang = "";
  lm.train_prefix = dir.path("corpus/vocab.txt");
  lm.output_dir = dir.path("corpus");
  const auto refused = error_of([&] { prepare_corpus(lm); });
  EXPECT_NE(refused.find("vocab.txt' is the same file as the train split"), std::string::npos) << refused;
  EXPECT_EQ(test::read_file(dir.path("corpus/vocab.txt")), "one two\nthree\n");

  // Prepared again with the tokenizer copy the folder holds (it failed copying the file onto itself).
  write_lines(dir.path("codes"), {"#version: 0.2", "a b"});
  options = parallel_options(dir);
  options.valid_prefix = dir.path("valid");
  options.tokenizer = "bpe:" + dir.path("codes");
  prepare_corpus(options);
  options.tokenizer = "bpe:" + dir.path("data/tokenizer.bpe");
  prepare_corpus(options);
  EXPECT_EQ(test::read_file(dir.path("data/tokenizer.bpe")), test::read_file(dir.path("codes")));
  EXPECT_EQ(PreparedData(dir.path("data")).tokenizer(), "bpe:" + dir.path("data/tokenizer.bpe"));
}

}  // namespace
}  // namespace mixseq
