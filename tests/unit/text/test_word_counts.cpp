#include "mixseq/text/word_counts.h"

#include <gtest/gtest.h>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

TEST(WordCounts, CountsWordsAsSubwordNmtSplitsThem) {
  test::TempDir dir;
  // Only single ASCII spaces separate words; tabs and no-break spaces are inside words; a form feed
  // ends a line for Python's codecs reader, so "b\f" and "c" are two words.
  const auto path = dir.write("text.txt", "  a  a\tx b\xC2\xA0y \r\nb\x0c" "c a\n\n");
  const auto counts = count_words({path});
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"a", 2}, {"a\tx", 1}, {"b\xC2\xA0y", 1}, {"b\x0c", 1}, {"c", 1}};
  EXPECT_EQ(counts.entries(), expected);
}

TEST(WordCounts, SavesByDecreasingCountWithTiesInFirstSeenOrder) {
  WordCounts counts;
  counts.add("z", 1);
  counts.add("y", 3);
  counts.add("x", 1);
  counts.add("z", 2);
  test::TempDir dir;
  counts.save(dir.path("vocab"));
  EXPECT_EQ(dir.read("vocab"), "z 3\ny 3\nx 1\n");  // z was seen before y
}

TEST(WordCounts, LoadAddsRepeatedWords) {
  test::TempDir dir;
  const auto counts = WordCounts::load(dir.write("vocab", "a 2\nb 1\r\na 3\n"));
  const std::vector<std::pair<std::string, int64_t>> expected = {{"a", 5}, {"b", 1}};
  EXPECT_EQ(counts.entries(), expected);
}

TEST(WordCounts, BadVocabularyLineNamesFileAndLine) {
  test::TempDir dir;
  for (const std::string bad : {"a b 3\n", "a\n", "a x\n", "a 3.5\n", "\n"}) {
    const auto path = dir.write("vocab", "ok 1\n" + bad);
    try {
      WordCounts::load(path);
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ":2: expected \"<word> <count>\""), std::string::npos) << e.what();
    }
  }
}

TEST(WordCounts, MalformedUtf8NamesFileAndLine) {
  test::TempDir dir;
  const auto path = dir.write("text.txt", "fine\nalso fine\nbad \xC3(\n");
  try {
    count_words({path});
    FAIL() << "accepted malformed UTF-8";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":3: malformed UTF-8 at byte 5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mixseq
