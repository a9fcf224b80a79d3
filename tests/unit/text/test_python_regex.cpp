#include "text/python_regex.h"

#include <gtest/gtest.h>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// re.split's result with None written as "<None>", to compare with Python's output in one line.
std::vector<std::string> split(const std::string& pattern, std::string_view text) {
  std::vector<std::string> out;
  for (const auto& piece : PythonRegex(pattern).split(text)) out.push_back(piece ? std::string(*piece) : "<None>");
  return out;
}

using Strings = std::vector<std::string>;

TEST(PythonRegex, SplitMatchesPython) {
  // Expected values printed by Python 3.11's re.split.
  EXPECT_EQ(split("(USA)", "1934USABUSA"), (Strings{"1934", "USA", "B", "USA", ""}));
  EXPECT_EQ(split("((a)(b)?)", "xabyaz"), (Strings{"x", "ab", "a", "b", "y", "a", "a", "<None>", "z"}));
  EXPECT_EQ(split("(\\d+)", "a12b3"), (Strings{"a", "12", "b", "3", ""}));
  // Empty matches split too (Python 3.7+), but not twice at one position.
  EXPECT_EQ(split("(x*)", "axbc"), (Strings{"", "", "a", "x", "", "", "b", "", "c", "", ""}));
  EXPECT_EQ(split("(a{,2})", "baaab"), (Strings{"", "", "b", "aa", "", "a", "", "", "b", "", ""}));
}

TEST(PythonRegex, RewritesPythonOnlySyntax) {
  EXPECT_EQ(split("({NUM})", "x{NUM}y"), (Strings{"x", "{NUM}", "y"}));  // "{" that starts no quantifier
  EXPECT_EQ(split("((?P<n>a)b(?P=n))", "xabay"), (Strings{"x", "aba", "a", "y"}));
  EXPECT_EQ(split("([]a-])", "b]c-d"), (Strings{"b", "]", "c", "-", "d"}));  // "]" first and "-" last are literals
  EXPECT_EQ(python_pattern_to_icu("a{,3}[:x&&y]\\Z"), "a{0,3}[\\:x\\&\\&y]\\z");
}

TEST(PythonRegex, MatchIsAnchoredAtTheStartOnly) {
  EXPECT_TRUE(PythonRegex("^a|b$").match("axyz"));  // re.match('^a|b$', 'axyz'): the first alternative
  EXPECT_FALSE(PythonRegex("b").match("ab"));
  EXPECT_TRUE(PythonRegex("b").search("ab"));
}

TEST(PythonRegex, CharacterClassesAndLineEndsFollowPython) {
  EXPECT_TRUE(PythonRegex("\\w").match("\xC3\xA9"));        // é
  EXPECT_FALSE(PythonRegex("\\w").match("\xCC\x81"));       // U+0301 COMBINING ACUTE: not \w for Python
  EXPECT_TRUE(PythonRegex("\\s").match("\x1C"));            // str.isspace()
  EXPECT_TRUE(PythonRegex("[\\s]").match("\xC2\x85"));      // U+0085 inside a class too
  EXPECT_TRUE(PythonRegex("a$").search("a\n"));             // "$" before a final "\n"
  EXPECT_FALSE(PythonRegex("a$").search("a\xE2\x80\xA8"));  // but not before U+2028
  EXPECT_FALSE(PythonRegex("a\\Z").search("a\n"));          // \Z is the very end
}

TEST(PythonRegex, SyntaxErrorNamesThePattern) {
  try {
    PythonRegex("(unclosed");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'(unclosed'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mixseq
