#include "mixseq/text/scoring_input.h"

#include <gtest/gtest.h>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "mixseq/text/bleu.h"
#include "mixseq/text/chrf.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

class ScoringInputTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& bytes) { return dir_.write(name, bytes); }

  // The message of the mixseq::Error that reading throws.
  std::string error_of(const std::string& hyp, const std::vector<std::string>& refs) {
    const std::string message = test::error_of([&] { read_scoring_input(hyp, refs); });
    if (message.empty()) ADD_FAILURE() << "expected mixseq::Error";
    return message;
  }

  test::TempDir dir_;
};

std::string input_with_version(std::string line) {
  const std::string placeholder = "{version}";
  return line.replace(line.find(placeholder), placeholder.size(), signature_version());
}

TEST_F(ScoringInputTest, StripsTrailingWhitespaceOnlyAndKeepsCarriageReturnsInside) {
  const auto hyp = write("hyp", "  lead\t \r\nin\rside \xC2\xA0\nlast line without newline");
  const auto ref = write("ref", "a\nb\nc\n");
  const ScoringInput input = read_scoring_input(hyp, {ref});
  EXPECT_EQ(input.hypotheses, (std::vector<std::string>{"  lead", "in\rside", "last line without newline"}));
  EXPECT_EQ(input.references, (std::vector<std::vector<std::string>>{{"a", "b", "c"}}));
}

TEST_F(ScoringInputTest, StandardInputUsesUniversalNewlines) {
  const auto ref = write("ref", "a\nb\nc\nd\n");
  std::istringstream fake_stdin("one\rtwo \r\nthree\nfour\r");
  std::streambuf* const saved = std::cin.rdbuf(fake_stdin.rdbuf());
  const ScoringInput input = read_scoring_input("-", {ref});
  std::cin.rdbuf(saved);
  EXPECT_EQ(input.hypotheses, (std::vector<std::string>{"one", "two", "three", "four"}));
}

// sacreBLEU opens files as "utf-8", so a byte-order mark stays glued to the first word of the
// first line. Expected lines come from sacreBLEU 2.x's command line on the same four files
// (`sacrebleu REF -i HYP -f text -w 2`, with and without `-m chrf`).
TEST_F(ScoringInputTest, ByteOrderMarksAreKeptAsSacrebleuKeepsThem) {
  const auto hyp = write("hyp", "The cat sat on the mat.\nIt is raining today.\n");
  const auto hyp_bom = write("hyp_bom", "\xEF\xBB\xBFThe cat sat on the mat.\nIt is raining today.  \r\n");
  const auto ref = write("ref", "The cat sat on the mat.\nIt rains today.\n");
  const auto ref_bom = write("ref_bom", "\xEF\xBB\xBFThe cat sat on the mat.\nIt rains today.\n");
  struct Case {
    std::string hyp, ref, bleu, chrf;
  };
  const std::vector<Case> cases = {
      {hyp, ref,
       "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 70.21 83.3/70.0/62.5/66.7 (BP = 1.000 ratio = 1.091 hyp_len = 12 ref_len = 11)",
       "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version} = 78.16"},
      {hyp, ref_bom,
       "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 57.91 75.0/60.0/50.0/50.0 (BP = 1.000 ratio = 1.091 hyp_len = 12 ref_len = 11)",
       "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version} = 75.90"},
      {hyp_bom, ref,
       "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 57.91 75.0/60.0/50.0/50.0 (BP = 1.000 ratio = 1.091 hyp_len = 12 ref_len = 11)",
       "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version} = 77.59"},
      {hyp_bom, ref_bom,
       "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version} = 70.21 83.3/70.0/62.5/66.7 (BP = 1.000 ratio = 1.091 hyp_len = 12 ref_len = 11)",
       "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version} = 79.01"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.hyp + " vs " + c.ref);
    const ScoringInput input = read_scoring_input(c.hyp, {c.ref});
    const BleuScore bleu = corpus_bleu(input.hypotheses, input.references, {});
    EXPECT_EQ(format_score_line(bleu_report(bleu, {}), 2, false), input_with_version(c.bleu));
    const ChrfScore chrf = corpus_chrf(input.hypotheses, input.references, {});
    EXPECT_EQ(format_score_line(chrf_report(chrf, {}), 2, false), input_with_version(c.chrf));
  }
}

TEST_F(ScoringInputTest, DifferentLineCountsNameEveryFileAndCount) {
  const auto hyp = write("hyp", "a\nb\nc\n");
  const auto ref1 = write("ref1", "a\nb\nc\n");
  const auto ref2 = write("ref2", "a\nb\n");
  EXPECT_EQ(error_of(hyp, {ref1, ref2}),
            "the system output and the references have different line counts: '" + hyp + "' has 3 lines, '" + ref1 +
                "' has 3, '" + ref2 + "' has 2; every reference file needs one line per system output line");
}

TEST_F(ScoringInputTest, MalformedUtf8NamesFileAndLine) {
  const auto hyp = write("hyp", "fine\nbro\xFFken\n");
  const auto ref = write("ref", "a\nb\n");
  EXPECT_EQ(error_of(hyp, {ref}), hyp + ":2: malformed UTF-8 at byte 4");
}

TEST_F(ScoringInputTest, MissingFileIsNamed) {
  const auto ref = write("ref", "a\n");
  const std::string missing = dir_.path("no_such_file");
  EXPECT_EQ(error_of(missing, {ref}), "cannot open '" + missing + "' for reading");
  EXPECT_EQ(error_of(ref, {missing}), "cannot open '" + missing + "' for reading");
}

// An empty line is an empty reference, as in sacreBLEU 2.2 and later, even where every file has one.
TEST_F(ScoringInputTest, EmptyReferenceLinesAreEmptyReferences) {
  const auto hyp = write("hyp", "a\nb\n");
  const auto ref1 = write("ref1", "a\n \t\n");  // whitespace only: empty once stripped
  const auto ref2 = write("ref2", "a\n\n");
  const ScoringInput input = read_scoring_input(hyp, {ref1, ref2});
  EXPECT_EQ(input.references, (std::vector<std::vector<std::string>>{{"a", ""}, {"a", ""}}));
  EXPECT_EQ(corpus_bleu(input.hypotheses, input.references, {}).num_refs, 2);
}

TEST_F(ScoringInputTest, EmptySystemOutputOrNoReferencesAreRejected) {
  const auto empty = write("empty", "");
  const auto ref = write("ref", "a\n");
  EXPECT_EQ(error_of(empty, {ref}), "'" + empty + "' has no lines: nothing to score");
  EXPECT_EQ(error_of(ref, {}), "no reference file given; name at least one before -i");
}

}  // namespace
}  // namespace mixseq
