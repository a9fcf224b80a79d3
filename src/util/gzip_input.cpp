#include "mixseq/util/gzip_input.h"

#include <cerrno>
#include <cstring>

#include "mixseq/util/error.h"

namespace mixseq {

GzipInput::GzipInput(const std::string& path) : file_(gzopen(path.c_str(), "rb")), buffer_(1 << 16) {
  MIXSEQ_CHECK(file_ != nullptr, "cannot open '", path, "' for reading: ", std::strerror(errno));
  gzbuffer(file_, 1 << 17);
}

GzipInput::~GzipInput() { gzclose(file_); }

GzipInput::int_type GzipInput::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  const int read = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
  if (read <= 0) {
    // A truncated or damaged stream ends the data early: say so instead of a quiet end of file.
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    if (code != Z_OK && code != Z_STREAM_END) {
      error_ = message;
      throw Error(error_);  // the istream sets badbit; the reader reports it with the file and line
    }
    return traits_type::eof();
  }
  setg(buffer_.data(), buffer_.data(), buffer_.data() + read);
  return traits_type::to_int_type(*gptr());
}

bool is_gzip_path(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

}  // namespace mixseq
