#include "mixseq/data/lm_text.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace mixseq {
namespace {

Vocabulary small_vocabulary() {
  TokenCounts counts;
  counts["the"] = 5;
  counts["cat"] = 3;
  counts["sat"] = 2;
  VocabularyOptions options;
  options.pad_to_multiple = 1;
  return Vocabulary::build(counts, options);
}

TEST(LmText, EveryLineEndsWithEosAndUnknownWordsAreCounted) {
  test::TempDir dir;
  const auto path = dir.write("text.txt", "the cat sat\n\nthe dog <unk>\n");
  const auto vocabulary = small_vocabulary();
  const auto tokenizer = load_tokenizer("none");
  const auto text = read_lm_text(path, *tokenizer, vocabulary);
  const auto the = vocabulary.id("the"), cat = vocabulary.id("cat"), sat = vocabulary.id("sat");
  EXPECT_EQ(text.tokens, (std::vector<int64_t>{the, cat, sat, kEosId, kEosId, the, kUnkId, kUnkId, kEosId}));
  EXPECT_EQ(text.lines, 3);
  EXPECT_EQ(text.unknown_tokens, 1);  // "dog"; the text's own "<unk>" is a word of the corpus
  EXPECT_EQ(text.characters, 12 + 1 + 14);
}

TEST(LmText, MalformedUtf8NamesTheLine) {
  test::TempDir dir;
  const auto path = dir.write("text.txt", "the cat\nthe \xC3\x28\n");
  const auto message = test::error_of([&] { read_lm_text(path, *load_tokenizer("none"), small_vocabulary()); });
  EXPECT_NE(message.find("text.txt:2"), std::string::npos) << message;
}

TEST(LmText, PiecesOutsideTheVocabularyAreListedOnce) {
  const auto outside = pieces_outside_vocabulary("the dog and the dog <unk> cat", *load_tokenizer("none"),
                                                 small_vocabulary());
  EXPECT_EQ(outside, (std::vector<std::string>{"dog", "and"}));
}

TEST(LmText, CharacterLevelVocabularies) {
  EXPECT_FALSE(is_character_level(small_vocabulary()));
  TokenCounts characters;
  characters["a"] = 3;
  characters["\xC3\xBC"] = 2;  // one character, two bytes
  EXPECT_TRUE(is_character_level(Vocabulary::build(characters)));  // filler symbols do not count
}

}  // namespace
}  // namespace mixseq
