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

bool LineReader::read_bounded_line(std::string& line) {
  line.clear();
  char block[1 << 16];
  for (;;) {
    // istream::getline stores up to sizeof block - 1 bytes: it stops at "\n" (taken, not stored),
    // at the end (eofbit, failbit too if it stored nothing) or with the block full (failbit).
    in_->getline(block, sizeof block);
    const std::streamsize taken = in_->gcount();
    if (in_->bad()) return false;
    if (!in_->fail()) {  // a "\n", or the end after some bytes
      ended_with_newline_ = !in_->eof();
      line.append(block, static_cast<size_t>(ended_with_newline_ ? taken - 1 : taken));
      break;
    }
    if (in_->eof()) {  // the end with nothing more stored: a last line that filled whole blocks, or none
      if (line.empty()) return false;  // (the last line's ending stays as it was read)
      ended_with_newline_ = false;
      break;
    }
    line.append(block, static_cast<size_t>(taken));  // a full block, the line goes on
    in_->clear();
    if (static_cast<int64_t>(line.size()) > max_line_bytes) refuse_long_line();
  }
  if (static_cast<int64_t>(line.size()) > max_line_bytes) refuse_long_line();
  return true;
}

void LineReader::refuse_long_line() {
  ++line_number_;
  const bool mebibytes = max_line_bytes >= (1 << 20) && max_line_bytes % (1 << 20) == 0;
  fail("the line runs past ", mebibytes ? max_line_bytes >> 20 : max_line_bytes, mebibytes ? " MiB" : " bytes",
       " without a line break, the longest line mixseq reads: is it a text file?");
}

bool LineReader::next(std::string& line) {
  if (!read_bounded_line(line)) {
    MIXSEQ_CHECK(!in_->bad(), "read error in '", path_, "' after line ", line_number_,
                 gzip_ && !gzip_->error().empty() ? ": " + gzip_->error() : std::string());
    return false;
  }
  ++line_number_;
  if (!keep_carriage_returns && !line.empty() && line.back() == '\r') line.pop_back();
  // A byte order mark that some editors write first (Windows' Notepad, Excel's "UTF-8 CSV"): not
  // part of the text, where it would be an invisible first character of the first path or word.
  static constexpr char kByteOrderMark[] = "\xEF\xBB\xBF";
  if (line_number_ == 1 && !keep_carriage_returns && line.compare(0, 3, kByteOrderMark) == 0) line.erase(0, 3);
  if (check_utf8) {
    if (const auto bad = find_invalid_utf8(line)) fail("malformed UTF-8 at byte ", *bad + 1);
    // Valid UTF-8, but no text holds it: it went into labels and vocabularies unseen.
    if (const auto nul = line.find('\0'); nul != std::string::npos)
      fail("a NUL byte at byte ", nul + 1, ": binary data, not text");
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
