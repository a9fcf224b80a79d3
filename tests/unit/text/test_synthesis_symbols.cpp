#include "mixseq/text/synthesis_symbols.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace mixseq {
namespace {

TEST(SynthesisSymbols, TableIsTheReferencesEnglishOne) {
  const auto& s = synthesis_symbols();
  ASSERT_EQ(s.size(), 148u);  // their n_symbols
  EXPECT_EQ(s[0], "_");
  EXPECT_EQ(s[1], "-");
  EXPECT_EQ(s[2], "!");
  EXPECT_EQ(s[11], " ");
  EXPECT_EQ(s[12], "A");
  EXPECT_EQ(s[38], "a");
  EXPECT_EQ(s[64], "@AA");
  EXPECT_EQ(s[147], "@ZH");
}

TEST(SynthesisSymbols, TextBecomesIds) {
  EXPECT_EQ(synthesis_symbol_ids("Hi, a-b!", "t"), (std::vector<int64_t>{19, 46, 6, 11, 38, 1, 39, 2}));
  EXPECT_EQ(synthesis_symbol_ids("a {HH AW1} b", "t"), (std::vector<int64_t>{38, 11, 64 + 42, 64 + 18, 11, 39}));
}

TEST(SynthesisSymbols, BadTextIsAClearError) {
  const auto empty = test::error_of([] { synthesis_symbol_ids("  \t", "texts.txt:3"); });
  EXPECT_EQ(empty, "texts.txt:3: empty text: nothing to synthesize");
  const auto digit = test::error_of([] { synthesis_symbol_ids("room 101", "texts.txt:4"); });
  EXPECT_NE(digit.find("texts.txt:4: column 6: '1' is not a symbol"), std::string::npos) << digit;
  EXPECT_NE(digit.find("spell out digits"), std::string::npos) << digit;
  const auto accent = test::error_of([] { synthesis_symbol_ids("caf\xc3\xa9", "x"); });
  EXPECT_NE(accent.find("column 4: byte 0xC3 (non-ASCII"), std::string::npos) << accent;
  const auto pad = test::error_of([] { synthesis_symbol_ids("a_b", "x"); });
  EXPECT_NE(pad.find("'_' is not a symbol"), std::string::npos) << pad;
  const auto phoneme = test::error_of([] { synthesis_symbol_ids("{HH XX}", "x"); });
  EXPECT_NE(phoneme.find("unknown ARPAbet phoneme 'XX'"), std::string::npos) << phoneme;
  const auto open = test::error_of([] { synthesis_symbol_ids("a {HH", "x"); });
  EXPECT_NE(open.find("no '}' closes them"), std::string::npos) << open;
  // Empty braces alone leave no symbol: the encoder's convolutions would fail on it (a 500 with a
  // LibTorch backtrace from `serve` before).
  for (const char* braces : {"{}", "{ }", "{  }"})
    EXPECT_EQ(test::error_of([&] { synthesis_symbol_ids(braces, "texts.txt:2"); }),
              "texts.txt:2: no symbols to synthesize: the braces hold no ARPAbet phonemes")
        << braces;
  EXPECT_EQ(synthesis_symbol_ids("{} a", "x").size(), 2u);  // " a": braces beside text are fine
}

}  // namespace
}  // namespace mixseq
