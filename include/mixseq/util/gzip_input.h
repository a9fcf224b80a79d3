// GzipInput: a gzip-compressed file read as a stream of its uncompressed bytes (zlib), so that
// text readers take corpus.en.gz as they take corpus.en (sacreBLEU and fairseq read .gz alike).
// Members written one after another (`cat a.gz b.gz`) are read as one text, as gzip reads them;
// a file cut short, damaged data, or bytes after the last member that are not gzip (a damaged
// second member, other data appended), which zlib's gzread passes over in silence, stop the text
// with an error: half a corpus must not read as a whole one. Zero bytes after the last member
// (padding) are allowed, as gzip allows them.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <streambuf>
#include <string>
#include <vector>

namespace mixseq {

class GzipInput : public std::streambuf {
 public:
  explicit GzipInput(const std::string& path);  // throws mixseq::Error naming the path if it cannot open it
  ~GzipInput() override;
  GzipInput(const GzipInput&) = delete;
  GzipInput& operator=(const GzipInput&) = delete;

  // Why reading stopped early ("unexpected end of file", "invalid stored block lengths",
  // "trailing data ..."), or "".
  const std::string& error() const { return error_; }

 protected:
  int_type underflow() override;

 private:
  // Keeps the unread compressed bytes and reads more after them; false at the end of the file.
  bool read_more();
  // After a member's end: starts the next member, or checks that only zero bytes follow; false at the end.
  bool start_next_member();
  [[noreturn]] void fail(const std::string& why);

  std::FILE* file_ = nullptr;
  z_stream stream_{};
  bool member_started_ = false;  // compressed bytes of the current member were read
  bool member_ended_ = false;
  bool finished_ = false;
  int64_t bytes_read_ = 0;  // of the file
  std::vector<unsigned char> input_;
  std::vector<char> buffer_;
  std::string error_;
};

// True for a path that names a gzip file by its extension (".gz").
bool is_gzip_path(const std::string& path);

}  // namespace mixseq
