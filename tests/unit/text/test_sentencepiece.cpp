#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "mixseq/text/sentencepiece_tokenizer.h"
#include "mixseq/text/sentencepiece_train.h"
#include "mixseq/util/error.h"
#include "test_support.h"
#include "text/sentencepiece_module.h"

namespace mixseq {
namespace {

// Sanitizer builds cannot open the SentencePiece module (text/sentencepiece_module.h says why).
#define SKIP_WITHOUT_SENTENCEPIECE()                                                          \
  if (const auto reason = sentencepiece_module::unavailable_reason(); !reason.empty()) { \
    GTEST_SKIP() << reason;                                                                   \
  }

// Sentences of made-up words sharing stems and endings (some non-ASCII), so that subword
// pieces exist to be found. Single spaces, no edge spaces: SentencePiece's normalization
// leaves them as they are, and decode(encode(x)) must give x back exactly.
std::vector<std::string> make_sentences(int count, uint32_t seed) {
  const std::vector<std::string> stems = {"haus", "baum", "straße", "über", "fluss", "stein", "café", "wald"};
  const std::vector<std::string> endings = {"", "er", "es", "chen", "lein", "ung", "en"};
  std::mt19937 rng(seed);
  std::vector<std::string> sentences;
  for (int i = 0; i < count; ++i) {
    std::string sentence;
    const int words = 3 + static_cast<int>(rng() % 8);
    for (int w = 0; w < words; ++w) {
      if (w > 0) sentence += ' ';
      sentence += stems[rng() % stems.size()] + endings[rng() % endings.size()];
      if (rng() % 9 == 0) sentence += " " + std::to_string(rng() % 1000) + " €";
    }
    sentences.push_back(sentence);
  }
  return sentences;
}

std::string as_lines(const std::vector<std::string>& sentences) {
  std::string text;
  for (const auto& s : sentences) text += s + "\n";
  return text;
}

// One model for the whole suite, trained from two files whose paths (and the model's) hold
// spaces and commas, as `mixseq spm train --input ... --input ...` would.
class SentencePieceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!sentencepiece_module::unavailable_reason().empty()) return;
    dir_ = new test::TempDir();
    corpus_ = new std::vector<std::string>(make_sentences(1500, 7));
    const std::vector<std::string> first(corpus_->begin(), corpus_->begin() + 700);
    const std::vector<std::string> second(corpus_->begin() + 700, corpus_->end());
    SentencePieceTrainOptions options;
    options.input_paths = {dir_->write("part one, train.txt", as_lines(first)),
                           dir_->write("part two, train.txt", as_lines(second))};
    options.model_prefix = dir_->path("models, v1/my model");  // a folder to be made, too
    options.vocab_size = 80;
    options.num_threads = 2;
    lines_read_ = train_sentencepiece(options);
    model_path_ = new std::string(options.model_prefix + ".model");
  }
  void SetUp() override { SKIP_WITHOUT_SENTENCEPIECE(); }
  static void TearDownTestSuite() {
    delete model_path_;
    delete corpus_;
    delete dir_;
  }

  static test::TempDir* dir_;
  static std::vector<std::string>* corpus_;
  static std::string* model_path_;
  static int64_t lines_read_;
};

test::TempDir* SentencePieceTest::dir_ = nullptr;
std::vector<std::string>* SentencePieceTest::corpus_ = nullptr;
std::string* SentencePieceTest::model_path_ = nullptr;
int64_t SentencePieceTest::lines_read_ = 0;

TEST_F(SentencePieceTest, TrainsFromEveryLineOfEveryInput) {
  EXPECT_EQ(lines_read_, 1500);
  sentencepiece::SentencePieceProcessor processor;
  ASSERT_TRUE(processor.Load(*model_path_).ok());
  EXPECT_EQ(processor.GetPieceSize(), 80);
  EXPECT_TRUE(std::ifstream(dir_->path("models, v1/my model.vocab")).good());
}

TEST_F(SentencePieceTest, DecodeOfEncodeGivesTheInputBack) {
  const SentencePieceTokenizer tokenizer(*model_path_);
  for (const auto& sentence : make_sentences(200, 99)) {  // unseen sentences
    const auto pieces = tokenizer.encode(sentence);
    ASSERT_FALSE(pieces.empty());
    EXPECT_EQ(tokenizer.decode(pieces), sentence);
  }
  EXPECT_TRUE(tokenizer.encode("").empty());
  EXPECT_EQ(tokenizer.decode({}), "");
  EXPECT_EQ(tokenizer.describe(), "spm:" + *model_path_);
}

TEST_F(SentencePieceTest, EncodeMatchesTheLibrarysEncodeAsPieces) {
  const SentencePieceTokenizer tokenizer(*model_path_);
  sentencepiece::SentencePieceProcessor processor;
  ASSERT_TRUE(processor.Load(*model_path_).ok());
  auto sentences = make_sentences(300, 5);
  sentences.push_back("  leading, trailing  and   repeated spaces  ");
  sentences.push_back("unbekannte zeichen: 漢字 ω");
  int64_t multi_piece_words = 0;
  for (const auto& sentence : sentences) {
    const auto pieces = tokenizer.encode(sentence);
    EXPECT_EQ(pieces, processor.EncodeAsPieces(sentence)) << sentence;
    multi_piece_words += static_cast<int64_t>(pieces.size()) > static_cast<int64_t>(std::count(sentence.begin(), sentence.end(), ' ')) + 1;
  }
  EXPECT_GT(multi_piece_words, 0) << "a vocabulary of 80 must split some words";
}

TEST_F(SentencePieceTest, EncodeGivesTheSameFromSeveralThreads) {
  const SentencePieceTokenizer tokenizer(*model_path_);
  const auto& sentences = *corpus_;
  std::vector<std::vector<std::string>> expected;
  for (const auto& s : sentences) expected.push_back(tokenizer.encode(s));
  std::vector<std::vector<std::vector<std::string>>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results)
    threads.emplace_back([&] {
      for (const auto& s : sentences) result.push_back(tokenizer.encode(s));
    });
  for (auto& t : threads) t.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

TEST(SentencePieceTokenizer, MissingModelIsAnErrorNamingThePath) {
  SKIP_WITHOUT_SENTENCEPIECE();
  test::TempDir dir;
  const std::string path = dir.path("nothing here.model");
  try {
    SentencePieceTokenizer tokenizer(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'" + path + "' does not exist"), std::string::npos) << e.what();
  }
}

TEST(SentencePieceTokenizer, CorruptModelIsAnErrorNamingThePath) {
  SKIP_WITHOUT_SENTENCEPIECE();
  test::TempDir dir;
  for (const std::string& content : {std::string("this is not a protobuf\n"), std::string()}) {
    const std::string path = dir.write("broken.model", content);
    try {
      SentencePieceTokenizer tokenizer(path);
      FAIL() << "expected an error for content '" << content << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot load SentencePiece model '" + path + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(SentencePieceTrain, BpeModelKeepsUserDefinedSymbolsWhole) {
  SKIP_WITHOUT_SENTENCEPIECE();
  test::TempDir dir;
  auto sentences = make_sentences(300, 3);
  for (size_t i = 0; i < sentences.size(); i += 3) sentences[i] += " <sep> ende";
  SentencePieceTrainOptions options;
  options.input_paths = {dir.write("train.txt", as_lines(sentences))};
  options.model_prefix = dir.path("bpe");
  options.vocab_size = 60;
  options.model_type = "bpe";
  options.user_defined_symbols = {"<sep>"};
  train_sentencepiece(options);
  const SentencePieceTokenizer tokenizer(dir.path("bpe.model"));
  const auto pieces = tokenizer.encode("haus <sep> baum");
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "<sep>"), pieces.end());
  EXPECT_EQ(tokenizer.decode(pieces), "haus <sep> baum");
}

// libsentencepiece logs to std::cerr: its training log, and a warning for a line over 4,192 bytes.
// Both crashed the process while the program held its own copy of std::cerr (issue 11,
// src/text/sentencepiece_module.h).
TEST(SentencePieceTrain, LogsItsProgressAndLongLinesWithoutCrashing) {
  SKIP_WITHOUT_SENTENCEPIECE();
  test::TempDir dir;
  std::string long_line;
  while (long_line.size() <= 4192) long_line += "haus baum straße ";
  auto sentences = make_sentences(200, 11);
  sentences.insert(sentences.begin() + 50, long_line);
  SentencePieceTrainOptions options;
  options.input_paths = {dir.write("train.txt", as_lines(sentences))};
  options.model_prefix = dir.path("m");
  options.vocab_size = 40;
  options.log_progress = true;
  EXPECT_EQ(train_sentencepiece(options), 201);
  const SentencePieceTokenizer tokenizer(dir.path("m.model"));
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("haus baum")), "haus baum");
}

TEST(SentencePieceTrain, InputOfOnlyOverlongLinesIsAnErrorThatSaysSo) {
  SKIP_WITHOUT_SENTENCEPIECE();
  test::TempDir dir;
  std::string long_line;
  while (long_line.size() <= 4192) long_line += "one two three ";
  SentencePieceTrainOptions options;
  options.input_paths = {dir.write("long.txt", long_line + "\n" + long_line + "\n")};
  options.model_prefix = dir.path("m");
  options.vocab_size = 10;
  EXPECT_NE(test::error_of([&] { train_sentencepiece(options); })
                .find("each of the 2 input lines is longer than 4192 bytes, which SentencePiece skips"),
            std::string::npos);
}

// libsentencepiece's own writer ignores write errors: a full disk left a truncated model and
// "wrote" (issue 11).
TEST(SentencePieceTrain, AModelThatCannotBeWrittenIsAnError) {
  SKIP_WITHOUT_SENTENCEPIECE();
  test::TempDir dir;
  SentencePieceTrainOptions options;
  options.input_paths = {dir.write("train.txt", as_lines(make_sentences(100, 4)))};
  options.model_prefix = dir.path("m");
  options.vocab_size = 40;
  const std::string error = test::error_of([&] {
    const test::FileSizeLimit full_disk(16384);  // the model takes about 240 kB
    train_sentencepiece(options);
  });
  EXPECT_EQ(error, "cannot write '" + dir.path("m.model") + "': File too large; '" + dir.path("m.model") +
                       "' is left as it was");
  EXPECT_FALSE(std::filesystem::exists(dir.path("m.model")));
}

TEST(SentencePieceTrain, MalformedUtf8IsAnErrorWithFileAndLine) {
  SKIP_WITHOUT_SENTENCEPIECE();
  test::TempDir dir;
  SentencePieceTrainOptions options;
  options.input_paths = {dir.write("good.txt", "haus baum\n"), dir.write("bad.txt", "haus\nba\xFFum\n")};
  options.model_prefix = dir.path("m");
  options.vocab_size = 20;
  try {
    train_sentencepiece(options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), options.input_paths[1] + ":2: malformed UTF-8 at byte 3");
  }
}

TEST(SentencePieceTrain, BadOptionsAreErrorsThatSayWhy) {
  SKIP_WITHOUT_SENTENCEPIECE();
  test::TempDir dir;
  SentencePieceTrainOptions options;
  options.input_paths = {dir.write("train.txt", as_lines(make_sentences(50, 1)))};
  options.model_prefix = dir.path("m");
  const auto error_of = [](const SentencePieceTrainOptions& o) -> std::string {
    try {
      train_sentencepiece(o);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  auto o = options;
  o.model_type = "wordpiece";
  EXPECT_NE(error_of(o).find("unknown SentencePiece model_type 'wordpiece'; known: unigram, bpe, char, word"),
            std::string::npos);
  o = options;
  o.user_defined_symbols = {"a,b"};
  EXPECT_NE(error_of(o).find("contains a comma"), std::string::npos);
  o = options;
  o.input_paths.push_back(dir.path("missing.txt"));
  EXPECT_NE(error_of(o).find("cannot open '" + dir.path("missing.txt") + "'"), std::string::npos) << error_of(o);
  o = options;
  o.vocab_size = 5000;  // far more than 50 short sentences allow
  EXPECT_NE(error_of(o).find("SentencePiece training of '" + o.model_prefix + ".model' failed"), std::string::npos)
      << error_of(o);
  // What SentencePiece refused in its own internal words ("trainer_interface.cc(754) [insert_id(...)]").
  o = options;
  o.vocab_size = 3;
  EXPECT_EQ(error_of(o), "vocab_size 3 leaves no room for pieces: <unk>, <s>, </s> take 3; give more");
  o.user_defined_symbols = {"<sep>"};
  o.vocab_size = 4;
  EXPECT_EQ(error_of(o), "vocab_size 4 leaves no room for pieces: <unk>, <s>, </s> and the 1 user-defined symbols take "
                         "4; give more");
  o = options;
  o.input_sentence_size = 100;
  EXPECT_NE(error_of(o).find("input_sentence_size must be 0 (all) or more than 100"), std::string::npos) << error_of(o);
  o = options;
  o.input_paths = {dir.write("empty.txt", ""), dir.write("blank.txt", "\n\n")};
  EXPECT_EQ(error_of(o), "spm train: no sentence to learn from in " + dir.path("empty.txt") + ", " +
                             dir.path("blank.txt") + " (2 lines read, each of them empty)");
  // The model and its vocabulary never replace an input (a corpus called m.vocab).
  o = options;
  o.input_paths = {dir.write("m.vocab", as_lines(make_sentences(50, 1)))};
  EXPECT_NE(error_of(o).find("--model-prefix '" + dir.path("m.vocab") + "' is the same file as --input"),
            std::string::npos)
      << error_of(o);
  EXPECT_EQ(test::read_file(dir.path("m.vocab")), as_lines(make_sentences(50, 1)));
}

}  // namespace
}  // namespace mixseq
