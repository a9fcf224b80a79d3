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
    EXPECT_EQ(reader.ended_with_newline(), final_newline);  // still the last line's, after the end
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
  // A NUL byte is valid UTF-8 but no text: named too (and the message is whole past it).
  write_gzip(dir.path("nul.gz"), std::string("fine\nsho\0rt\n", 12));
  EXPECT_EQ(test::error_of([&] { read_lines(dir.path("nul.gz")); }),
            dir.path("nul.gz") + ":2: a NUL byte at byte 4: binary data, not text");
  const Error quoted(std::string("label 'sho\0rt' is unknown", 25));
  EXPECT_EQ(std::string(quoted.what()), "label 'sho\\0rt' is unknown");
}

// Members one after another (`cat a.gz b.gz`) are one text, as gzip reads them, and zero bytes
// after the last are padding; anything else after it (a second member whose header was damaged,
// other data appended) is an error: zlib's gzread passed over it, and half a corpus read as whole.
TEST(LineReader, GzipMembersAreOneTextAndTrailingDataIsAnError) {
  test::TempDir dir;
  std::string first, second;
  for (int i = 0; i < 3000; ++i) first += "first " + std::to_string(i) + "\n";
  for (int i = 0; i < 3000; ++i) second += "second " + std::to_string(i) + "\n";
  const std::string a = test::read_file(write_gzip(dir.path("a.gz"), first));
  const std::string b = test::read_file(write_gzip(dir.path("b.gz"), second));
  const auto lines = read_lines(dir.write("both.gz", a + b));
  ASSERT_EQ(lines.size(), 6000u);
  EXPECT_EQ(lines[2999], "first 2999");
  EXPECT_EQ(lines[3000], "second 0");
  EXPECT_EQ(read_lines(dir.write("padded.gz", a + b + std::string(300000, '\0'))).size(), 6000u);
  EXPECT_EQ(read_lines(dir.write("empty.gz", "")).size(), 0u);

  const auto trailing = [&](const std::string& name, const std::string& bytes, size_t at) {
    const std::string path = dir.write(name, bytes);
    const auto error = test::error_of([&] { read_lines(path); });
    EXPECT_EQ(error.rfind("read error in '" + path + "' after line ", 0), 0u) << error;
    EXPECT_NE(error.find("trailing data that is not gzip at byte " + std::to_string(at) + ", after the last whole gzip member"),
              std::string::npos)
        << error;
  };
  trailing("damaged_second.gz", a + b.substr(2), a.size());  // the second member's magic bytes lost
  trailing("appended.gz", a + "some text\n", a.size());
  trailing("zeros_then_text.gz", a + std::string(10, '\0') + "x", a.size() + 10);
  trailing("one_byte.gz", a + "\x1f", a.size());
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

// Lines longer than one read block come back whole, at every boundary; a line past max_line_bytes
// is an error naming the file and line, in plain text and gzip alike (a gzip bomb of one 4 GiB
// line filled memory until "read error ... after line 0").
TEST(LineReader, LongLinesAreReadWholeUpToTheLimitAndRefusedPastIt) {
  test::TempDir dir;
  const size_t block = 1 << 16;
  std::vector<std::string> expected;
  std::string text;
  for (const size_t length : {block - 2, block - 1, block, block + 1, 3 * block - 1, 3 * block, size_t{5}}) {
    std::string line(length, 'a');
    for (size_t i = 0; i < length; i += 997) line[i] = static_cast<char>('b' + i % 20);
    expected.push_back(line);
    text += line + "\n";
  }
  const std::string last(2 * block - 1, 'z');  // the last line, without "\n", ends one byte before a block does
  expected.push_back(last);
  text += last;
  for (const auto& path : {dir.write("long.txt", text), write_gzip(dir.path("long.txt.gz"), text)}) {
    EXPECT_EQ(read_lines(path), expected) << path;
    LineReader reader(path);
    for (std::string line; reader.next(line);) {
    }
    EXPECT_FALSE(reader.ended_with_newline()) << path;
    EXPECT_EQ(reader.line_number(), 8) << path;
  }
  // A last line that ends exactly at a block's end, with and without its "\n".
  for (const std::string end : {"", "\n"}) {
    const std::string exact = std::string(block - 1, 'x');
    const std::string path = dir.write("exact.txt", "first\n" + exact + end);
    EXPECT_EQ(read_lines(path), (std::vector<std::string>{"first", exact}));
  }

  const std::string plain = dir.write("two.txt", "short\n" + std::string(3 * block, 'q') + "\nafter\n");
  const std::string gz = write_gzip(dir.path("two.txt.gz"), "short\n" + std::string(3 * block, 'q'));
  for (const auto& path : {plain, gz}) {
    for (const int64_t limit : {int64_t{1000}, int64_t{3} * 65536 - 1}) {  // runs past it mid-line, or at the line's end
      LineReader reader(path);
      reader.max_line_bytes = limit;
      std::string line;
      ASSERT_TRUE(reader.next(line));
      EXPECT_EQ(test::error_of([&] { reader.next(line); }),
                path + ":2: the line runs past " + std::to_string(limit) +
                    " bytes without a line break, the longest line mixseq reads: is it a text file?");
    }
    LineReader reader(path);
    reader.max_line_bytes = 3 * 65536;  // exactly the line's length: taken
    std::string line;
    ASSERT_TRUE(reader.next(line) && reader.next(line));
    EXPECT_EQ(line.size(), 3 * block);
  }
  EXPECT_EQ(LineReader::kMaxLineBytes, int64_t{256} << 20);
}

}  // namespace
}  // namespace mixseq
