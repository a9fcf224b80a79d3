#include "mixseq/text/vocabulary.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

// Worked by hand. Counts over both files: the 3; a, cat, dog, sat 2; and, mat, on 1 (14 tokens).
// Order: count descending, ties in byte order.
const char* const kFileA = "the cat sat on the mat\nthe  dog sat \n";  // a double and a trailing space
const char* const kFileB = "a cat and a dog\n";

TokenCounts hand_counts() {
  return {{"the", 3}, {"a", 2}, {"cat", 2}, {"dog", 2}, {"sat", 2}, {"and", 1}, {"mat", 1}, {"on", 1}};
}

VocabularyOptions options(int64_t max_size, int64_t min_count, int64_t pad_to_multiple) {
  VocabularyOptions o;
  o.max_size = max_size;
  o.min_count = min_count;
  o.pad_to_multiple = pad_to_multiple;
  return o;
}

const VocabularyEncodeOptions kBosAndEos{/*add_bos=*/true, /*add_eos=*/true};
const VocabularyEncodeOptions kEosOnly{/*add_bos=*/false, /*add_eos=*/true};

std::vector<std::string> tokens_of(const Vocabulary& vocabulary) {
  std::vector<std::string> tokens;
  for (int64_t id = 0; id < vocabulary.size(); ++id) tokens.push_back(vocabulary.token(id));
  return tokens;
}

std::string read_file(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  return text.str();
}


TEST(Vocabulary, CountsTokensOverSeveralFiles) {
  test::TempDir dir;
  EXPECT_EQ(count_tokens({dir.write("a.txt", kFileA), dir.write("b.txt", kFileB)}), hand_counts());
}

// Windows line ends: `vocab build` counted "cat\r" while `prepare` (which splits on any whitespace)
// saw "cat", so every line's last piece mapped to <unk> (issue 11).
TEST(Vocabulary, CountsTheSameTokensInCrlfFiles) {
  test::TempDir dir;
  std::string crlf_a = kFileA, crlf_b = kFileB;
  for (auto* text : {&crlf_a, &crlf_b})
    for (size_t at = 0; (at = text->find('\n', at)) != std::string::npos; at += 2) text->insert(at, "\r");
  EXPECT_EQ(count_tokens({dir.write("a.txt", crlf_a), dir.write("b.txt", crlf_b)}), hand_counts());
}

TEST(Vocabulary, SpecialSymbolsHaveFixedIds) {
  const auto vocabulary = Vocabulary::build({{"x", 1}}, options(0, 1, 1));
  EXPECT_EQ(vocabulary.token(kPadId), "<pad>");
  EXPECT_EQ(vocabulary.token(kUnkId), "<unk>");
  EXPECT_EQ(vocabulary.token(kBosId), "<s>");
  EXPECT_EQ(vocabulary.token(kEosId), "</s>");
  EXPECT_EQ(vocabulary.id("<pad>"), 0);
  EXPECT_EQ(vocabulary.id("<unk>"), 1);
  EXPECT_EQ(vocabulary.id("<s>"), 2);
  EXPECT_EQ(vocabulary.id("</s>"), 3);
  EXPECT_EQ(vocabulary.id("x"), 4);
}

TEST(Vocabulary, OrdersByCountThenByBytes) {
  const auto vocabulary = Vocabulary::build(hand_counts(), options(0, 1, 1));
  EXPECT_EQ(tokens_of(vocabulary), (std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>", "the", "a", "cat",
                                                             "dog", "sat", "and", "mat", "on"}));
  EXPECT_EQ(vocabulary.count(4), 3);
  EXPECT_EQ(vocabulary.count(11), 1);
  // Bytes compare unsigned: 'Z' (0x5A) < 'a' (0x61) < 'ä' (0xC3 0xA4).
  const auto bytes = Vocabulary::build({{"\xC3\xA4pfel", 1}, {"apple", 1}, {"Zebra", 1}}, options(0, 1, 1));
  EXPECT_EQ(bytes.token(4), "Zebra");
  EXPECT_EQ(bytes.token(5), "apple");
  EXPECT_EQ(bytes.token(6), "\xC3\xA4pfel");
}

TEST(Vocabulary, MinCountLeavesOutRareTokens) {
  const auto vocabulary = Vocabulary::build(hand_counts(), options(0, 2, 1));
  EXPECT_EQ(tokens_of(vocabulary),
            (std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>", "the", "a", "cat", "dog", "sat"}));
  EXPECT_EQ(vocabulary.id("mat"), kUnkId);
}

TEST(Vocabulary, MaxSizeKeepsTheMostFrequentAndCoverageCountsTheRest) {
  const auto vocabulary = Vocabulary::build(hand_counts(), options(6, 1, 1));
  EXPECT_EQ(tokens_of(vocabulary), (std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>", "the", "a"}));
  const auto coverage = measure_coverage(vocabulary, hand_counts());
  EXPECT_EQ(coverage.token_count, 14);
  EXPECT_EQ(coverage.covered_token_count, 5);  // the 3 + a 2
  EXPECT_EQ(coverage.type_count, 8);
  EXPECT_EQ(coverage.dropped_type_count, 6);
  EXPECT_DOUBLE_EQ(coverage.coverage(), 5.0 / 14.0);
  EXPECT_NE(error_of([] { Vocabulary::build(hand_counts(), options(3, 1, 8)); }).find("no room for the 4 special"),
            std::string::npos);
}

TEST(Vocabulary, PadsTheSizeToAMultipleWithFillers) {
  const auto padded = Vocabulary::build(hand_counts());  // 12 entries, padded to 16 by default
  ASSERT_EQ(padded.size(), 16);
  EXPECT_EQ(padded.token(12), "<filler0>");
  EXPECT_EQ(padded.token(15), "<filler3>");
  EXPECT_EQ(padded.count(15), 0);
  EXPECT_EQ(Vocabulary::build(hand_counts(), options(0, 1, 1)).size(), 12);
  EXPECT_EQ(Vocabulary::build(hand_counts(), options(0, 1, 4)).size(), 12);
  EXPECT_EQ(Vocabulary::build(hand_counts(), options(0, 2, 8)).size(), 16);
  // A filler name the text uses (below min_count here) is skipped, so it still maps to <unk>.
  auto counts = hand_counts();
  counts["<filler0>"] = 1;
  const auto skipped = Vocabulary::build(counts, options(0, 2, 8));
  EXPECT_EQ(skipped.token(9), "<filler1>");
  EXPECT_EQ(skipped.id("<filler0>"), kUnkId);
}

TEST(Vocabulary, TextSpellingASpecialSymbolCountsTowardsIt) {
  const auto vocabulary = Vocabulary::build({{"<unk>", 5}, {"x", 2}}, options(0, 1, 1));
  EXPECT_EQ(vocabulary.size(), 5);
  EXPECT_EQ(vocabulary.count(kUnkId), 5);
}

TEST(Vocabulary, SaveThenLoadGivesAnEqualVocabulary) {
  test::TempDir dir;
  const auto vocabulary = Vocabulary::build(hand_counts());
  const std::string path = dir.path("sub dir/vocab.txt");
  vocabulary.save(path);
  EXPECT_EQ(read_file(path),
            "<pad> 0\n<unk> 0\n<s> 0\n</s> 0\nthe 3\na 2\ncat 2\ndog 2\nsat 2\nand 1\nmat 1\non 1\n"
            "<filler0> 0\n<filler1> 0\n<filler2> 0\n<filler3> 0\n");
  const auto loaded = Vocabulary::load(path);
  EXPECT_EQ(loaded, vocabulary);
  EXPECT_EQ(loaded.id("dog"), 7);
  EXPECT_NE(loaded, Vocabulary::build(hand_counts(), options(0, 2, 8)));
}

TEST(Vocabulary, LoadsAFileWithWindowsLineEnds) {
  test::TempDir dir;
  const auto loaded = Vocabulary::load(dir.write("vocab.txt", "<pad> 0\r\n<unk> 0\r\n<s> 0\r\n</s> 0\r\ncat 2\r\n"));
  EXPECT_EQ(loaded.size(), 5);
  EXPECT_EQ(loaded.id("cat"), 4);
}

TEST(Vocabulary, UnknownTokensMapToUnk) {
  const auto vocabulary = Vocabulary::build(hand_counts());
  EXPECT_EQ(vocabulary.id("zebra"), kUnkId);
  EXPECT_EQ(vocabulary.id(""), kUnkId);
  EXPECT_FALSE(vocabulary.contains("zebra"));
  EXPECT_TRUE(vocabulary.contains("the"));
}

TEST(Vocabulary, EncodesAndDecodesWithBosAndEos) {
  const auto vocabulary = Vocabulary::build(hand_counts());
  const std::vector<std::string> pieces = {"the", "zebra", "sat"};
  EXPECT_EQ(vocabulary.encode(pieces), (std::vector<int64_t>{4, kUnkId, 8}));
  EXPECT_EQ(vocabulary.encode(pieces, kBosAndEos),
            (std::vector<int64_t>{kBosId, 4, kUnkId, 8, kEosId}));
  EXPECT_EQ(vocabulary.encode(pieces, kEosOnly), (std::vector<int64_t>{4, kUnkId, 8, kEosId}));
  EXPECT_EQ(vocabulary.encode_line(" the  zebra sat ", kBosAndEos),
            vocabulary.encode(pieces, kBosAndEos));
  EXPECT_EQ(vocabulary.encode_line(""), std::vector<int64_t>{});
  // decode skips <pad> and <s>, stops at the first </s>, and spells <unk>.
  EXPECT_EQ(vocabulary.decode({kBosId, 4, kUnkId, kPadId, 8, kEosId, 5, kEosId, kPadId}),
            (std::vector<std::string>{"the", "<unk>", "sat"}));
  EXPECT_NE(error_of([&] { vocabulary.decode({4, 16}); }).find("token id 16 is out of range for a vocabulary of size 16"),
            std::string::npos);
}

TEST(Vocabulary, CopiesLookUpIndependentlyOfTheOriginal) {
  std::optional<Vocabulary> copy, assigned;
  {
    const auto original = Vocabulary::build(hand_counts());
    copy.emplace(original);
    assigned.emplace(Vocabulary::build({}));
    *assigned = original;
  }
  // Same sizes as the original's, so the allocator hands its freed memory to these: a copy
  // that still looked into the original would now find other tokens.
  TokenCounts others;
  for (const auto& [token, count] : hand_counts()) others["X" + token] = count;
  const auto reuse = Vocabulary::build(others);
  auto source = Vocabulary::build(hand_counts());
  const Vocabulary moved = std::move(source);
  const Vocabulary* const vocabularies[] = {&*copy, &*assigned, &moved};
  for (const Vocabulary* v : vocabularies) {
    EXPECT_EQ(v->id("dog"), 7);
    EXPECT_EQ(v->id("on"), 11);
    EXPECT_EQ(v->id("Xdog"), kUnkId);
  }
  EXPECT_EQ(reuse.id("Xdog"), 7);
}

TEST(Vocabulary, MalformedUtf8InTheTextIsAnErrorWithFileAndLine) {
  test::TempDir dir;
  const std::string bad = dir.write("bad.txt", "fine line\nbad \xC3( piece\n");
  EXPECT_EQ(error_of([&] { count_tokens({dir.write("good.txt", "ok\n"), bad}); }),
            bad + ":2: malformed UTF-8 at byte 5");
}

struct BadFileCase {
  std::string content;
  int line;             // where the error must point
  std::string message;  // how the error must start after "<path>:<line>: "
};

TEST(Vocabulary, BadFilesAreErrorsNamingFileAndLine) {
  const std::string specials = "<pad> 0\n<unk> 0\n<s> 0\n</s> 0\n";
  const std::vector<BadFileCase> cases = {
      {specials + "a 5\nb 4\na 3\n", 7, "duplicate token 'a' (first on line 5)"},
      {specials + "a 5\nb\n", 6, "no count after token 'b'"},
      {specials + "a 5\nb 4x\n", 6, "malformed count '4x' for token 'b'"},
      {specials + "a -1\n", 5, "malformed count '-1' for token 'a'"},
      {specials + "a 5 6\n", 5, "malformed count '5 6' for token 'a'"},
      {specials + " 5\n", 5, "empty token"},
      {specials + "a 5\n\n", 6, "empty line"},
      {specials + "a 5\n<s> 0\n", 6, "duplicate token '<s>' (first on line 3)"},
      {"<pad> 0\n<s> 0\n<unk> 0\n</s> 0\n", 2, "expected the special symbol '<unk>' (id 1), found '<s>'"},
      {"the 5\n", 1, "expected the special symbol '<pad>' (id 0), found 'the'"},
      {"<pad> 0\n<unk> 0\n", 3, "expected the special symbol '<s>' (id 2), found the end of the file"},
      {"", 1, "expected the special symbol '<pad>' (id 0), found the end of the file"},
      {specials + "ok 2\nb\xFF 1\n", 6, "malformed UTF-8 at byte 2"},
  };
  test::TempDir dir;
  for (const auto& [content, line, message] : cases) {
    const std::string path = dir.write("vocab.txt", content);
    const std::string error = error_of([&] { Vocabulary::load(path); });
    const std::string prefix = path + ":" + std::to_string(line) + ": " + message;
    EXPECT_EQ(error.substr(0, prefix.size()), prefix) << "file:\n" << content;
  }
}

}  // namespace
}  // namespace mixseq
