// MappedFile maps a whole file read-only into memory, so datasets larger than RAM can be
// read without loading them; the OS pages in what is touched. Move-only; unmaps on destruction.
#pragma once

#include <cstddef>
#include <string>

namespace mixseq {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws mixseq::Error naming the path
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace mixseq
