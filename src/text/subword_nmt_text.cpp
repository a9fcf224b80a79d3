#include "subword_nmt_text.h"

#include "mixseq/util/utf8.h"

namespace mixseq {

size_t leading_strip_chars(std::string_view line) {
  const size_t first = line.find_first_not_of(kSubwordNmtStripChars);
  return first == std::string_view::npos ? line.size() : first;
}

size_t trailing_strip_chars(std::string_view line) {
  const size_t last = line.find_last_not_of(kSubwordNmtStripChars);
  return last == std::string_view::npos ? line.size() : line.size() - last - 1;
}

std::string_view strip_subword_nmt(std::string_view line) {
  const size_t lead = leading_strip_chars(line);
  if (lead == line.size()) return {};
  return line.substr(lead, line.size() - lead - trailing_strip_chars(line));
}

bool PythonLineReader::next(std::string_view& line) {
  while (next_line_ == lines_.size()) {
    if (!reader_.next(text_)) return false;
    if (reader_.ended_with_newline()) text_.push_back('\n');
    lines_ = split_python_lines(text_);
    next_line_ = 0;
  }
  line = lines_[next_line_++];
  return true;
}

}  // namespace mixseq
