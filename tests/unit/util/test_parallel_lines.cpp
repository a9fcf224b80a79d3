#include "mixseq/util/parallel_lines.h"

#include <gtest/gtest.h>

#include <sstream>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

std::string numbered_lines(int n) {
  std::string text;
  for (int i = 1; i <= n; ++i) text += "line " + std::to_string(i) + "\n";
  return text;
}

TEST(ParallelLines, KeepsInputOrderAcrossThreadsAndRounds) {
  test::TempDir dir;
  const std::string path = dir.write("in.txt", numbered_lines(101));
  const LineTransform shout = [](const std::string& line) { return "<" + line + ">"; };
  std::string expected;
  for (int i = 1; i <= 101; ++i) expected += "<line " + std::to_string(i) + ">\n";
  for (const int threads : {1, 3, 8}) {
    LineReader in(path);
    std::ostringstream out;
    // chunk_lines=4: 101 lines take several rounds, the last one partial and uneven.
    EXPECT_EQ(transform_lines(in, out, shout, {threads, 4}), 101);
    EXPECT_EQ(out.str(), expected) << "threads=" << threads;
  }
}

TEST(ParallelLines, EmptyInputWritesNothing) {
  test::TempDir dir;
  LineReader in(dir.write("empty.txt", ""));
  std::ostringstream out;
  EXPECT_EQ(transform_lines(in, out, [](const std::string& line) { return line; }, {2, 4}), 0);
  EXPECT_EQ(out.str(), "");
}

TEST(ParallelLines, ReportsTheFirstFailingLine) {
  test::TempDir dir;
  const std::string path = dir.write("in.txt", numbered_lines(20));
  const LineTransform fail_on_13_and_17 = [](const std::string& line) -> std::string {
    if (line == "line 13" || line == "line 17") throw Error("cannot do " + line);
    return line;
  };
  LineReader in(path);
  std::ostringstream out;
  try {
    transform_lines(in, out, fail_on_13_and_17, {3, 2});  // rounds of 6 lines
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ":13: cannot do line 13");
  }
  EXPECT_EQ(out.str(), numbered_lines(12)) << "the two rounds before the failing one are written";
}

}  // namespace
}  // namespace mixseq
