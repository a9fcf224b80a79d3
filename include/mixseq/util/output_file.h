// Output files. OutputFile writes a regular file as "<path>.tmp" and renames it over <path> on
// commit(), so a reader (or a resumed run) never sees a half-written file and a failed write leaves
// <path> as it was. A symbolic link is followed: the file it points to is replaced that way and the
// link stays. What exists and is not a regular file (a fifo, a terminal, /dev/null, /dev/full) and
// the names of open files (/dev/stdout, /dev/fd/N) are written directly, as nothing can be renamed
// over them; "-" writes to standard output. Every open, write, flush and close error throws
// mixseq::Error naming the file and the system's reason ("No space left on device").
// One writer per OutputFile; nothing is shared between instances but std::cout.
#pragma once

#include <memory>
#include <ostream>
#include <string>

namespace mixseq {

struct OutputFileOptions {
  bool sync_to_disk = false;  // fsync the temporary file before the rename (checkpoints): a crash
                              // then leaves the old file or the whole new one; false = the OS decides
};

class OutputFile {
 public:
  explicit OutputFile(const std::string& path, const OutputFileOptions& options = {});
  ~OutputFile();  // without commit(), a temporary file is removed and <path> is untouched
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return *out_; }
  // Flushes and checks every byte was written, then renames the temporary file into place.
  void commit();

 private:
  class DescriptorBuffer;  // a std::streambuf over a file descriptor that keeps the first error

  std::string path_;            // as given, for messages
  std::string temporary_path_;  // "<target>.tmp" renamed over target_ on commit(); "" when writing directly
  std::string target_;          // the file replaced on commit(): path_, or where its symbolic links end
  OutputFileOptions options_;
  std::unique_ptr<DescriptorBuffer> buffer_;
  std::unique_ptr<std::ostream> file_;
  std::ostream* out_;
  bool committed_ = false;
};

}  // namespace mixseq
