#include "mixseq/util/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace mixseq {
namespace {

TEST(LineReader, ReportsWhetherTheLastLineEndedWithANewline) {
  for (const bool final_newline : {true, false}) {
    test::TempDir dir;
    LineReader reader(dir.write("in.txt", final_newline ? "a\n\nb\n" : "a\n\nb"));
    std::string line;
    ASSERT_TRUE(reader.next(line));
    EXPECT_TRUE(reader.ended_with_newline());
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(line, "");
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(line, "b");
    EXPECT_EQ(reader.ended_with_newline(), final_newline);
    EXPECT_FALSE(reader.next(line));
  }
}

// A directory opens as an ifstream and failed at the first read: "read error after line 0".
TEST(LineReader, ADirectoryIsAnErrorThatSaysSo) {
  test::TempDir dir;
  EXPECT_EQ(test::error_of([&] { LineReader reader(dir.root().string()); }),
            "cannot read '" + dir.root().string() + "': it is a directory, not a text file");
}

TEST(LineReader, WindowsLineEndsEndLinesAsNewlinesDo) {
  test::TempDir dir;
  const std::string path = dir.write("crlf.txt", "a b\r\n\r\nc\rd\r\ne\r");
  std::vector<std::string> lines;
  LineReader reader(path);
  for (std::string line; reader.next(line);) lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<std::string>{"a b", "", "c\rd", "e"}));  // a "\r" inside a line stays
  EXPECT_EQ(read_lines(path), lines);

  LineReader exact(path);
  exact.keep_carriage_returns = true;
  lines.clear();
  for (std::string line; exact.next(line);) lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<std::string>{"a b\r", "\r", "c\rd\r", "e\r"}));
}

}  // namespace
}  // namespace mixseq
