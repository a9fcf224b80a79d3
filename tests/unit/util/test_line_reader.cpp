#include "mixseq/util/line_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

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

TEST(LineReader, AByteOrderMarkThatStartsTheFileIsNotText) {
  test::TempDir dir;
  // Only at the very start: one further in is text (and the exact readers keep the first).
  const std::string path = dir.write("bom.tsv", "\xEF\xBB\xBFg0.wav\ttwo\n\xEF\xBB\xBFg1.wav\n");
  EXPECT_EQ(read_lines(path), (std::vector<std::string>{"g0.wav\ttwo", "\xEF\xBB\xBFg1.wav"}));
  LineReader exact(path);
  exact.keep_carriage_returns = true;
  std::string line;
  ASSERT_TRUE(exact.next(line));
  EXPECT_EQ(line, "\xEF\xBB\xBFg0.wav\ttwo");
  const std::string short_mark = dir.write("short.txt", "\xEF\xBB" "a\n");  // not a whole mark: kept
  EXPECT_EQ(test::error_of([&] { read_lines(short_mark); }), short_mark + ":1: malformed UTF-8 at byte 1");
}

// gzip a file's bytes with zlib, as `gzip` would.
std::string write_gzip(const std::string& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  EXPECT_NE(file, nullptr);
  EXPECT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(file);
  return path;
}

TEST(LineReader, GzipFilesAreReadAsTheirText) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "sentence " + std::to_string(i) + " \xC3\xBC\r\n";  // several buffers
  text += "last line without a newline";
  const std::string path = write_gzip(dir.path("corpus.en.gz"), text);
  const auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 20001u);
  EXPECT_EQ(lines[0], "sentence 0 \xC3\xBC");
  EXPECT_EQ(lines[19999], "sentence 19999 \xC3\xBC");
  EXPECT_EQ(lines[20000], "last line without a newline");
  LineReader reader(path);
  for (std::string line; reader.next(line);) {
  }
  EXPECT_FALSE(reader.ended_with_newline());

  // Malformed UTF-8 inside is reported with the file and line, as in plain text.
  write_gzip(dir.path("bad.gz"), "fine\nbad \xFF\n");
  EXPECT_EQ(test::error_of([&] { read_lines(dir.path("bad.gz")); }), dir.path("bad.gz") + ":2: malformed UTF-8 at byte 5");
}

TEST(LineReader, ATruncatedGzipFileIsAnErrorNotAShortText) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "line " + std::to_string(i * 7919 % 10007) + "\n";
  const std::string whole = test::read_file(write_gzip(dir.path("whole.gz"), text));
  const std::string path = dir.write("cut.gz", whole.substr(0, whole.size() / 2));
  const auto error = test::error_of([&] { read_lines(path); });
  EXPECT_EQ(error.rfind("read error in '" + path + "' after line ", 0), 0u) << error;
  EXPECT_NE(error.find("unexpected end of file"), std::string::npos) << error;
}

}  // namespace
}  // namespace mixseq
