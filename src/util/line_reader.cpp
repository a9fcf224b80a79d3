#include "mixseq/util/line_reader.h"

#include <poll.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <vector>

#include "mixseq/util/utf8.h"

namespace mixseq {

LineReader::LineReader(const std::string& path) : path_(path == "-" ? "<stdin>" : path) {
  if (path == "-") {
    in_ = &std::cin;
    return;
  }
  // An ifstream opens a directory and fails only at the first read ("read error after line 0").
  MIXSEQ_CHECK(!std::filesystem::is_directory(path), "cannot read '", path, "': it is a directory, not a text file");
  if (is_gzip_path(path)) {
    gzip_ = std::make_unique<GzipInput>(path);
    gzip_stream_ = std::make_unique<std::istream>(gzip_.get());
    in_ = gzip_stream_.get();
    return;
  }
  file_ = std::make_unique<std::ifstream>(path, std::ios::binary);
  MIXSEQ_CHECK(file_->is_open(), "cannot open '", path, "' for reading");
  in_ = file_.get();
}

bool LineReader::next(std::string& line) {
  if (!std::getline(*in_, line)) {
    MIXSEQ_CHECK(!in_->bad(), "read error in '", path_, "' after line ", line_number_,
                 gzip_ && !gzip_->error().empty() ? ": " + gzip_->error() : std::string());
    return false;
  }
  ++line_number_;
  ended_with_newline_ = !in_->eof();  // getline sets eof only when the file ended before a "\n"
  if (!keep_carriage_returns && !line.empty() && line.back() == '\r') line.pop_back();
  // A byte order mark that some editors write first (Windows' Notepad, Excel's "UTF-8 CSV"): not
  // part of the text, where it would be an invisible first character of the first path or word.
  static constexpr char kByteOrderMark[] = "\xEF\xBB\xBF";
  if (line_number_ == 1 && !keep_carriage_returns && line.compare(0, 3, kByteOrderMark) == 0) line.erase(0, 3);
  if (check_utf8) {
    if (const auto bad = find_invalid_utf8(line)) fail("malformed UTF-8 at byte ", *bad + 1);
  }
  return true;
}

bool LineReader::line_waiting() const {
  if (in_ != &std::cin) return true;  // a file, plain or gzip
  pollfd stdin_poll{STDIN_FILENO, POLLIN, 0};
  return ::poll(&stdin_poll, 1, /*timeout=*/0) > 0;  // data, or the end (POLLHUP)
}

std::vector<std::string> read_lines(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) lines.push_back(std::move(line));
  return lines;
}

}  // namespace mixseq
