// CTC symbols that are the pieces of a SentencePiece model: the set is the model's pieces (its
// <unk> and control symbols left out), transcripts encode to libsentencepiece's own segmentation,
// decode gives the normalised transcript back, vocab.txt round trips, and the errors name files.
#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

#include <filesystem>
#include <fstream>

#include "mixseq/text/ctc_symbols.h"
#include "mixseq/text/sentencepiece_train.h"
#include "mixseq/util/error.h"
#include "test_support.h"
#include "text/sentencepiece_module.h"

namespace mixseq {
namespace {

const std::vector<std::string> kTranscripts = {
    "one two three",     "four five six seven", "eight nine zero",     "twenty one",      "thirty three",
    "forty four",        "fifty five",          "sixty six",           "seventy seven",   "eighty eight",
    "ninety nine",       "one hundred",         "two hundred and one", "three thousand",  "seventeen",
    "nineteen eighteen", "sixteen fifteen",     "fourteen thirteen",   "twelve eleven ten"};

class CtcPiecesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto reason = sentencepiece_module::unavailable_reason(); !reason.empty()) GTEST_SKIP() << reason;
    std::string text;
    for (int repeat = 0; repeat < 20; ++repeat)
      for (const auto& line : kTranscripts) text += line + "\n";
    SentencePieceTrainOptions options;
    options.input_paths = {dir_.write("transcripts.txt", text)};
    options.model_prefix = dir_.path("units");
    options.vocab_size = 40;
    options.num_threads = 1;
    train_sentencepiece(options);
    model_ = options.model_prefix + ".model";
  }

  test::TempDir dir_;
  std::string model_;
};

TEST_F(CtcPiecesTest, SymbolsAreTheModelsPiecesAfterTheBlank) {
  const auto symbols = CtcSymbols::from_sentencepiece(model_);
  sentencepiece::SentencePieceProcessor processor;
  ASSERT_TRUE(processor.Load(model_).ok());
  EXPECT_TRUE(symbols.pieces());
  EXPECT_EQ(symbols.size(), 1 + processor.GetPieceSize() - 3);  // the blank; no <unk>, <s>, </s>
  EXPECT_EQ(symbols.symbol(0), "<blank>");
  for (int64_t id = 1; id < symbols.size(); ++id) {
    std::string spelling = symbols.symbol(id);
    if (spelling.front() == ' ') spelling = "\xE2\x96\x81" + spelling.substr(1);  // " one" is "▁one"
    EXPECT_FALSE(processor.IsUnknown(processor.PieceToId(spelling))) << spelling;
    EXPECT_FALSE(processor.IsControl(processor.PieceToId(spelling))) << spelling;
  }
}

TEST_F(CtcPiecesTest, EncodesAsTheLibrarySegmentsAndDecodesBack) {
  const auto symbols = CtcSymbols::from_sentencepiece(model_);
  sentencepiece::SentencePieceProcessor processor;
  ASSERT_TRUE(processor.Load(model_).ok());
  size_t pieces_used = 0, characters = 0;
  for (const auto& transcript : {std::string("twenty one"), std::string("seven hundred and sixty"),
                                 std::string("nine nine nine"), std::string("eleven")}) {
    const auto ids = symbols.encode(transcript);
    ASSERT_TRUE(ids.has_value()) << transcript;
    const auto pieces = processor.EncodeAsPieces(transcript);
    ASSERT_EQ(ids->size(), pieces.size()) << transcript;
    std::string joined;
    for (size_t i = 0; i < pieces.size(); ++i) {
      std::string text = symbols.symbol((*ids)[i]);
      if (text.front() == ' ') text = "\xE2\x96\x81" + text.substr(1);
      EXPECT_EQ(text, pieces[i]) << transcript;
      joined += symbols.symbol((*ids)[i]);
    }
    EXPECT_EQ(joined, " " + transcript);
    EXPECT_EQ(symbols.decode(*ids), transcript);
    pieces_used += ids->size();
    characters += transcript.size();
  }
  EXPECT_LT(pieces_used * 2, characters) << "pieces of a trained model are longer than characters";
  std::string why;
  EXPECT_FALSE(symbols.encode("caf\xc3\xa9", &why).has_value());
  EXPECT_EQ(why.rfind("characters '", 0), 0u) << why;  // prepare counts it as a character outside the symbols
  EXPECT_FALSE(symbols.encode("", &why).has_value());
}

TEST_F(CtcPiecesTest, VocabularyTextRoundTripsAndDecodesWithoutTheModel) {
  const auto symbols = CtcSymbols::from_sentencepiece(model_);
  const std::string text = symbols.to_text();
  EXPECT_EQ(text.rfind("<blank>\tpieces\n", 0), 0u) << text;
  const auto again = CtcSymbols::from_text(text, "vocab.txt");
  EXPECT_TRUE(again.pieces());
  EXPECT_EQ(again.to_text(), text);
  const auto ids = *symbols.encode("forty four");
  EXPECT_EQ(again.decode(ids), "forty four");
  EXPECT_THROW(again.encode("forty four"), Error);  // no model to segment with
}

TEST_F(CtcPiecesTest, MissingAndMalformedFilesAreNamed) {
  std::filesystem::copy_file(model_, dir_.path("alone.model"));
  try {
    CtcSymbols::from_sentencepiece(dir_.path("alone.model"));
    ADD_FAILURE() << "a model without its .vocab was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("alone.vocab"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CtcSymbols::from_sentencepiece(dir_.path("none.model")), Error);
  const auto fails = [](const std::string& text, const std::string& expected) {
    try {
      CtcSymbols::from_text(text, "vocab.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  fails("<blank>\tpieces\n\xE2\x96\x81one\n\xE2\x96\x81one\n", "vocab.txt:3");
  fails("<blank>\tpieces\n<unk>\n", "control symbol");
  fails("<blank>\tpieces\non e\n", "vocab.txt:2");
}

}  // namespace
}  // namespace mixseq
