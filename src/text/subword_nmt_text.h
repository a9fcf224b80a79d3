// How subword-nmt's scripts read text, so that mixseq's BPE tools see the same lines and words.
//
// subword-nmt opens files with codecs.open(..., encoding='utf-8'), whose readline cuts at every line
// boundary Python knows (str.splitlines: \n, \r, \r\n, \v, \f, \x1c-\x1e, U+0085, U+2028, U+2029) and
// keeps it, and then takes words with line.strip('\r\n ').split(' '): only ASCII spaces separate
// words, so a tab or a no-break space is part of a word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mixseq/util/line_reader.h"

namespace mixseq {

// The characters subword-nmt strips from both ends of a line: "\r\n ".
constexpr std::string_view kSubwordNmtStripChars = "\r\n ";

// line.strip('\r\n '), line.lstrip('\r\n ') and line.rstrip('\r\n ').
std::string_view strip_subword_nmt(std::string_view line);
size_t leading_strip_chars(std::string_view line);   // bytes lstrip would remove
size_t trailing_strip_chars(std::string_view line);  // bytes rstrip would remove

// Reads a file ("-": stdin) as codecs.open does: each line keeps its boundary, and a "\n"-line
// holding other boundaries (say a form feed) yields several lines. Malformed UTF-8 throws
// "<path>:<line>: ..." with the number of the "\n"-line, which is what editors show.
class PythonLineReader {
 public:
  explicit PythonLineReader(const std::string& path) : reader_(path) {
    reader_.keep_carriage_returns = true;  // "\r" is one of Python's line boundaries, cut below
  }

  // The next line, valid until the following call; false at the end of the file.
  bool next(std::string_view& line);

  // "<path>:<line>: <what>" for the current "\n"-line.
  template <typename... Args>
  [[noreturn]] void fail(const Args&... what) const {
    reader_.fail(what...);
  }

 private:
  LineReader reader_;
  std::string text_;                     // the current "\n"-line, with its "\n"
  std::vector<std::string_view> lines_;  // text_ cut at every Python line boundary
  size_t next_line_ = 0;
};

}  // namespace mixseq
