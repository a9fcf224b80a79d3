// LineReader reads a text file line by line and knows where it is, so that every complaint
// about the input can name the file and the line. "-" reads standard input; a path ending in
// ".gz" is decompressed as it is read (util/gzip_input.h). It is the one reader
// of text in mixseq, so text is read alike everywhere: a line ends at "\n", and a "\r" before it
// (Windows line ends, "\r\n") is not part of the line, nor is a UTF-8 byte order mark that starts
// the file. Only readers that reproduce another tool byte for byte (subword-nmt's, sacreBLEU's,
// and so `wer`, `bleu` and `chrf`) keep both and apply that tool's rules.
#pragma once

#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/util/error.h"
#include "mixseq/util/gzip_input.h"

namespace mixseq {

class LineReader {
 public:
  // Opens `path` ("-" for stdin); throws mixseq::Error naming the path if it cannot.
  explicit LineReader(const std::string& path);

  // Reads the next line without its "\n" (and a "\r" that ends it) into `line`; false at the end of the file.
  // With check_utf8, malformed UTF-8 throws "<path>:<line>: malformed UTF-8 at byte <n>", and so
  // does a NUL byte ("a NUL byte at byte <n>: binary data, not text").
  bool next(std::string& line);

  // Whether next() would return at once: always for a file; for stdin, whether a line (or the
  // end) is already waiting in the pipe. A streaming reader fills its buffer only while this
  // holds, so a line typed into a pipe is answered without waiting for more (a line that stdio
  // already buffered may read as not waiting: the buffer then ends early, nothing blocks).
  bool line_waiting() const;

  const std::string& path() const { return path_; }
  int64_t line_number() const { return line_number_; }  // 1-based number of the last line read
  // False only for a last line that the file ends without "\n"; tools that copy lines use it
  // to reproduce the input's ending byte for byte.
  bool ended_with_newline() const { return ended_with_newline_; }
  bool check_utf8 = true;
  // Keep a "\r" that ends a line, and a byte order mark that starts the file, for readers that
  // apply another tool's line rules (see above).
  bool keep_carriage_returns = false;
  // The longest line taken; a longer one throws "<path>:<line>: the line runs past N MiB without a
  // line break ..." rather than filling memory (a binary file given as text, a gzip bomb of one
  // 4 GiB line).
  int64_t max_line_bytes = kMaxLineBytes;
  static constexpr int64_t kMaxLineBytes = int64_t{256} << 20;

  // "<path>:<line>: <what>" for the line last read.
  template <typename... Args>
  [[noreturn]] void fail(const Args&... what) const {
    throw input_error(path_, line_number_, what...);
  }

 private:
  std::string path_;
  std::unique_ptr<std::ifstream> file_;
  std::unique_ptr<GzipInput> gzip_;
  std::unique_ptr<std::istream> gzip_stream_;
  std::istream* in_;
  // Reads up to the next "\n" into `line` in blocks, stopping at max_line_bytes; false at the end.
  bool read_bounded_line(std::string& line);
  [[noreturn]] void refuse_long_line();
  int64_t line_number_ = 0;
  bool ended_with_newline_ = true;
};

// Reads a whole text file into lines (checking UTF-8); "-" reads stdin.
std::vector<std::string> read_lines(const std::string& path);

}  // namespace mixseq
