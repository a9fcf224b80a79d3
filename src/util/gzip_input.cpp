#include "mixseq/util/gzip_input.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mixseq/util/error.h"

namespace mixseq {

GzipInput::GzipInput(const std::string& path) : input_(1 << 17), buffer_(1 << 16) {
  file_ = std::fopen(path.c_str(), "rb");
  MIXSEQ_CHECK(file_ != nullptr, "cannot open '", path, "' for reading: ", std::strerror(errno));
  stream_.next_in = input_.data();
  stream_.avail_in = 0;
  if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {  // 16: the gzip wrapper, not zlib's
    std::fclose(file_);
    throw Error(str_cat("cannot read '", path, "': zlib could not start (out of memory)"));
  }
}

GzipInput::~GzipInput() {
  inflateEnd(&stream_);
  std::fclose(file_);
}

void GzipInput::fail(const std::string& why) {
  error_ = why;
  finished_ = true;
  throw Error(error_);  // the istream sets badbit; the reader reports it with the file and line
}

bool GzipInput::read_more() {
  // The unread bytes to the front, then as many more as fit after them.
  if (stream_.avail_in > 0 && stream_.next_in != input_.data())
    std::memmove(input_.data(), stream_.next_in, stream_.avail_in);
  stream_.next_in = input_.data();
  const size_t read = std::fread(input_.data() + stream_.avail_in, 1, input_.size() - stream_.avail_in, file_);
  if (read == 0 && std::ferror(file_)) fail(str_cat("read error: ", std::strerror(errno)));
  stream_.avail_in += static_cast<uInt>(read);
  bytes_read_ += static_cast<int64_t>(read);
  return read > 0;
}

bool GzipInput::start_next_member() {
  for (;;) {
    while (stream_.avail_in < 2 && read_more()) {
    }
    if (stream_.avail_in == 0) return false;  // the end, after the last member
    Bytef* next = stream_.next_in;
    if (stream_.avail_in >= 2 && next[0] == 0x1f && next[1] == 0x8b) {  // another member (`cat a.gz b.gz`)
      inflateReset(&stream_);
      member_started_ = member_ended_ = false;
      return true;
    }
    if (next[0] == 0) {  // zeros after the last member: padding, taken as gzip takes it
      Bytef* nonzero = std::find_if(next, next + stream_.avail_in, [](Bytef c) { return c != 0; });
      stream_.avail_in -= static_cast<uInt>(nonzero - next);
      stream_.next_in = nonzero;
      continue;
    }
    fail(str_cat("trailing data that is not gzip at byte ", bytes_read_ - stream_.avail_in,
                 ", after the last whole gzip member: the file is damaged, or other data were appended "
                 "(gzip -t: \"trailing garbage ignored\")"));
  }
}

GzipInput::int_type GzipInput::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  while (!finished_) {
    if (member_ended_ && !start_next_member()) {
      finished_ = true;
      break;
    }
    if (stream_.avail_in == 0 && !read_more()) {
      // The end of the file: inside a member, the data were cut short.
      if (member_started_) fail("unexpected end of file: the gzip data end before their member does (truncated)");
      finished_ = true;  // an empty file: no text
      break;
    }
    member_started_ = true;
    stream_.next_out = reinterpret_cast<Bytef*>(buffer_.data());
    stream_.avail_out = static_cast<uInt>(buffer_.size());
    const int code = inflate(&stream_, Z_NO_FLUSH);
    if (code == Z_STREAM_END) {
      member_ended_ = true;
    } else if (code != Z_OK && code != Z_BUF_ERROR) {
      fail(stream_.msg != nullptr ? stream_.msg : str_cat("zlib error ", code));
    }
    const size_t produced = buffer_.size() - stream_.avail_out;
    if (produced > 0) {
      setg(buffer_.data(), buffer_.data(), buffer_.data() + produced);
      return traits_type::to_int_type(*gptr());
    }
  }
  return traits_type::eof();
}

bool is_gzip_path(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

}  // namespace mixseq
