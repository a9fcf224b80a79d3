// Output files. OutputFile writes to "<path>.tmp" and renames it over <path> on commit(),
// so a reader (or a resumed run) never sees a half-written file; "-" writes to stdout.
#pragma once

#include <fstream>
#include <memory>
#include <ostream>
#include <string>

namespace mixseq {

class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();  // without commit(), the temporary file is removed and <path> is untouched
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return *out_; }
  // Flushes, checks for write errors and atomically renames the file into place.
  void commit();

 private:
  std::string path_;
  std::string temporary_path_;
  std::unique_ptr<std::ofstream> file_;
  std::ostream* out_;
  bool committed_ = false;
};

}  // namespace mixseq
