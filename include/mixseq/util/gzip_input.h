// GzipInput: a gzip-compressed file read as a stream of its uncompressed bytes (zlib), so that
// text readers take corpus.en.gz as they take corpus.en (sacreBLEU and fairseq read .gz alike).
#pragma once

#include <zlib.h>

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

  // Why reading stopped early ("unexpected end of file", "invalid stored block lengths"), or "".
  const std::string& error() const { return error_; }

 protected:
  int_type underflow() override;

 private:
  gzFile file_;
  std::vector<char> buffer_;
  std::string error_;
};

// True for a path that names a gzip file by its extension (".gz").
bool is_gzip_path(const std::string& path);

}  // namespace mixseq
