// CTC symbol sets: OpenSeq2Seq's English characters, vocab.txt round trips and errors, transcript
// normalisation and encoding.
#include <gtest/gtest.h>

#include "mixseq/text/ctc_symbols.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

TEST(CtcSymbols, EnglishIsTheBlankPlusOpenSeq2SeqsTwentyEightCharacters) {
  const auto symbols = CtcSymbols::english_characters();
  EXPECT_EQ(symbols.size(), 29);
  EXPECT_EQ(symbols.symbol(0), "<blank>");
  EXPECT_EQ(symbols.symbol(1), " ");
  EXPECT_EQ(symbols.symbol(2), "'");
  EXPECT_EQ(symbols.symbol(3), "a");
  EXPECT_EQ(symbols.symbol(28), "z");
}

TEST(CtcSymbols, NormalizesAndEncodes) {
  const auto symbols = CtcSymbols::english_characters();
  EXPECT_EQ(CtcSymbols::normalize("  Hello\tWORLD  it's \n"), "hello world it's");
  const auto ids = symbols.encode("ab c");
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(*ids, (std::vector<int64_t>{3, 4, 1, 5}));
  EXPECT_EQ(symbols.decode(*ids), "ab c");
  // A space emitted first, or twice with a blank between: the text is normalised as transcripts are.
  EXPECT_EQ(symbols.decode({1, 3, 1, 0, 1, 4, 1}), "a b");
  std::string why;
  EXPECT_FALSE(symbols.encode("caf\xc3\xa9", &why).has_value());
  EXPECT_NE(why.find("\xc3\xa9"), std::string::npos) << why;
  EXPECT_FALSE(symbols.encode("", &why).has_value());
  EXPECT_EQ(why, "empty transcript");
  EXPECT_FALSE(symbols.encode("a1", &why).has_value());
}

TEST(CtcSymbols, VocabularyTextRoundTripsAndRejectsMalformedLists) {
  const auto english = CtcSymbols::english_characters();
  const auto again = CtcSymbols::from_text(english.to_text(), "vocab.txt");
  EXPECT_EQ(again.to_text(), english.to_text());
  EXPECT_EQ(again.symbol(1), " ");
  const auto utf8 = CtcSymbols::from_text("<blank>\n\xc3\xa9\n<space>\n", "v");
  EXPECT_EQ(utf8.encode("\xc3\xa9 \xc3\xa9")->size(), 3u);
  const auto fails = [](const std::string& text, const std::string& expected) {
    try {
      CtcSymbols::from_text(text, "vocab.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  fails("a\nb\n", "vocab.txt:1");
  fails("<blank>\nab\n", "vocab.txt:2");
  fails("<blank>\na\na\n", "listed twice");
  fails("<blank>\n", "no symbols");
  fails("<blank>\n\xff\n", "malformed UTF-8");
}

}  // namespace
}  // namespace mixseq
