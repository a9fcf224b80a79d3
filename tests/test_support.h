// Helpers shared by the test suites: temporary folders, small files, error messages.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace mixseq::test {

// A fresh folder under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path(const std::string& name) const { return (root_ / name).string(); }
  // Writes `content` byte for byte to <dir>/<name> (name may hold folders) and returns its path.
  std::string write(const std::string& name, const std::string& content) const;
  // The bytes of <dir>/<name>.
  std::string read(const std::string& name) const;
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

// Writes `content` to `path` byte for byte, creating its folder if needed.
void write_file(const std::string& path, const std::string& content);
// Writes the lines, each followed by "\n".
void write_lines(const std::string& path, const std::vector<std::string>& lines);
std::string read_file(const std::string& path);

// A full disk for this process while it lives: writes past `bytes` into any file fail with EFBIG
// ("File too large") instead of raising SIGXFSZ. Tests of write errors use it rather than
// /dev/full, which code that wrongly replaces its output would replace when run as root.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(long bytes);
  ~FileSizeLimit();
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  unsigned long previous_limit_;  // rlim_t
  void (*previous_handler_)(int);
};

// The message of the mixseq::Error that `action` throws, or "" when it throws none.
std::string error_of(const std::function<void()>& action);

}  // namespace mixseq::test
