#include "mixseq/util/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {
namespace fs = std::filesystem;

namespace {

constexpr int kMaxSymbolicLinks = 40;  // Linux's own limit (ELOOP)

std::string system_reason(int error) { return error != 0 ? std::strerror(error) : "unknown error"; }

// How OutputFile writes a path: the file to replace through "<file>.tmp", or the path to write
// straight into.
struct Destination {
  std::string file;
  bool replace = true;
};

// The links in /proc/<pid>/fd (behind /dev/stdout and /dev/fd/N) name open files, not paths: the
// file there may be the shell's redirection, to be written into, not replaced.
bool is_open_file_link(const fs::path& link) {
  std::error_code error;
  const auto folder = fs::canonical(fs::absolute(link).parent_path(), error);
  return !error && folder.string().rfind("/proc/", 0) == 0;
}

Destination choose_destination(const std::string& path) {
  std::error_code error;
  const auto status = fs::status(path, error);  // follows symbolic links
  MIXSEQ_CHECK(!fs::is_directory(status), "cannot write '", path, "': it is a directory; name a file (e.g. '",
               (fs::path(path) / "out.txt").string(), "')");
  if (fs::exists(status) && !fs::is_regular_file(status)) return {path, false};  // fifo, device, socket
  fs::path file = path;
  for (int links = 0; fs::is_symlink(fs::symlink_status(file, error)); ++links) {
    MIXSEQ_CHECK(links < kMaxSymbolicLinks, "cannot write '", path, "': more than ", kMaxSymbolicLinks,
                 " symbolic links to follow (a loop?)");
    if (is_open_file_link(file)) return {path, false};
    const fs::path target = fs::read_symlink(file);
    file = target.is_absolute() ? target : file.parent_path() / target;
  }
  return {file.string(), true};
}

}  // namespace

// Buffers writes to a file descriptor; the first failing write(2) keeps its errno for the message.
class OutputFile::DescriptorBuffer : public std::streambuf {
 public:
  // `owned`: closed with the buffer (standard output's is not).
  explicit DescriptorBuffer(int fd, bool owned = true) : fd_(fd), owned_(owned) { setp(data_, data_ + sizeof data_); }
  ~DescriptorBuffer() override {
    if (fd_ >= 0 && owned_) ::close(fd_);
  }
  int fd() const { return fd_; }
  int error() const { return error_; }
  // Closes the descriptor; false (with error() set) when it or an earlier write failed.
  bool close() {
    const bool written = drain();
    const int result = ::close(fd_);
    fd_ = -1;
    if (result != 0 && error_ == 0 && errno != EINTR) error_ = errno;
    return written && error_ == 0;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }
  // Writers that fill in a header at the end seek back (TokenDatasetWriter); a fifo cannot.
  pos_type seekoff(off_type offset, std::ios_base::seekdir direction, std::ios_base::openmode which) override {
    const pos_type failed(off_type(-1));
    if (!(which & std::ios_base::out) || !drain()) return failed;
    const int whence = direction == std::ios_base::beg ? SEEK_SET : direction == std::ios_base::cur ? SEEK_CUR : SEEK_END;
    const off_t position = ::lseek(fd_, offset, whence);
    if (position < 0) {
      error_ = errno;
      return failed;
    }
    return pos_type(position);
  }
  pos_type seekpos(pos_type position, std::ios_base::openmode which) override {
    return seekoff(off_type(position), std::ios_base::beg, which);
  }

 private:
  bool drain() {
    if (error_ != 0) return false;
    for (const char* next = pbase(); next < pptr();) {
      const ssize_t written = ::write(fd_, next, static_cast<size_t>(pptr() - next));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        error_ = written < 0 ? errno : EIO;
        return false;
      }
      next += written;
    }
    setp(data_, data_ + sizeof data_);
    return true;
  }

  int fd_;
  bool owned_;
  int error_ = 0;
  char data_[1 << 16];
};

namespace {
// std::cout's buffer once keep_standard_output_errors() has run; never freed, since std::cout is
// flushed into it at exit, after static objects may be gone.
OutputFile::DescriptorBuffer* standard_output_buffer = nullptr;
}  // namespace

void keep_standard_output_errors() {
  if (standard_output_buffer != nullptr || ::isatty(STDOUT_FILENO)) return;
  std::cout.flush();
  standard_output_buffer = new OutputFile::DescriptorBuffer(STDOUT_FILENO, /*owned=*/false);
  std::cout.rdbuf(standard_output_buffer);
}

OutputFile::OutputFile(const std::string& path, const OutputFileOptions& options) : path_(path), options_(options) {
  if (path == "-") {
    out_ = &std::cout;
    return;
  }
  const Destination destination = choose_destination(path);
  int fd = -1;
  if (destination.replace) {
    target_ = destination.file;
    const auto parent = fs::path(target_).parent_path();
    try {
      if (!parent.empty()) create_folder(parent.string());
    } catch (const Error& e) {
      throw Error(str_cat("cannot write '", path, "': ", e.what()));
    }
    temporary_path_ = target_ + ".tmp";
    fd = ::open(temporary_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    MIXSEQ_CHECK(fd >= 0, "cannot open '", temporary_path_, "' for writing: ", system_reason(errno));
    struct stat existing;
    if (::stat(target_.c_str(), &existing) == 0) ::fchmod(fd, existing.st_mode & 07777);  // keep its permissions
  } else {
    // O_APPEND: behind /dev/stdout may be the shell's ">>" redirection.
    fd = ::open(destination.file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    MIXSEQ_CHECK(fd >= 0, "cannot open '", path, "' for writing: ", system_reason(errno));
  }
  buffer_ = std::make_unique<DescriptorBuffer>(fd);
  file_ = std::make_unique<std::ostream>(buffer_.get());
  out_ = file_.get();
}

OutputFile::~OutputFile() {
  if (!temporary_path_.empty() && !committed_) {
    buffer_.reset();
    std::remove(temporary_path_.c_str());
  }
}

void OutputFile::flush() {
  errno = 0;
  out_->flush();
  if (!buffer_) {
    MIXSEQ_CHECK(out_->good(), "cannot write to standard output: ", standard_output_error());
    return;
  }
  MIXSEQ_CHECK(out_->good() && buffer_->error() == 0, "cannot write '", path_, "': ", system_reason(buffer_->error()),
               temporary_path_.empty() ? "" : str_cat("; '", path_, "' is left as it was"));
}

void OutputFile::commit() {
  flush();
  if (!buffer_) {  // standard output
    committed_ = true;
    return;
  }
  const std::string unchanged = temporary_path_.empty() ? "" : str_cat("; '", path_, "' is left as it was");
  if (options_.sync_to_disk && !temporary_path_.empty())
    MIXSEQ_CHECK(::fsync(buffer_->fd()) == 0, "cannot write '", path_, "' to disk: ", system_reason(errno), unchanged);
  MIXSEQ_CHECK(buffer_->close(), "cannot write '", path_, "': ", system_reason(buffer_->error()), unchanged);
  if (!temporary_path_.empty()) {
    std::error_code error;
    fs::rename(temporary_path_, target_, error);
    MIXSEQ_CHECK(!error, "cannot move '", temporary_path_, "' to '", target_, "': ", error.message(), unchanged);
  }
  committed_ = true;
}

std::string standard_output_error() {
  if (standard_output_buffer != nullptr && standard_output_buffer->error() != 0)
    return std::strerror(standard_output_buffer->error());
  if (errno != 0) return std::strerror(errno);
  if (std::fflush(stdout) != 0 && errno != 0) return std::strerror(errno);  // stdio tries what it holds again
  return "an earlier write failed (a full disk or device, or a closed pipe; the system's reason was not kept)";
}

void create_folder(const std::string& path) {
  std::error_code error;
  if (fs::create_directories(path, error) || !error) return;
  // The first part of the path that exists but is not a folder (a file, a dangling link) says why.
  fs::path part;
  for (const auto& name : fs::path(path)) {
    part /= name;
    std::error_code ignored;
    const auto status = fs::status(part, ignored);
    if (fs::exists(status) && !fs::is_directory(status))
      throw Error(str_cat("cannot create the folder '", path, "': '", part.string(), "' is not a folder"));
  }
  throw Error(str_cat("cannot create the folder '", path, "': ", error.message()));
}

namespace {

// (device, inode) of an existing regular file, links followed; nothing for the others.
std::optional<std::pair<uint64_t, uint64_t>> regular_file_identity(const std::string& path) {
  if (path.empty() || path == "-") return std::nullopt;
  struct stat status;
  if (::stat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
  return std::make_pair(static_cast<uint64_t>(status.st_dev), static_cast<uint64_t>(status.st_ino));
}

// The identity of a file a command reads: "-" is standard input, which a shell may have opened
// on a regular file (`mixseq bpe apply -o text.en < text.en`).
std::optional<std::pair<uint64_t, uint64_t>> input_identity(const std::string& path) {
  if (path != "-") return regular_file_identity(path);
  struct stat status;
  if (::fstat(STDIN_FILENO, &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
  return std::make_pair(static_cast<uint64_t>(status.st_dev), static_cast<uint64_t>(status.st_ino));
}

}  // namespace

bool same_regular_file(const std::string& a, const std::string& b) {
  const auto first = regular_file_identity(a);
  return first && first == regular_file_identity(b);
}

InputFiles::InputFiles(const std::vector<NamedPath>& inputs) {
  for (const auto& input : inputs) add(input);
}

void InputFiles::add(const NamedPath& input) {
  if (const auto identity = input_identity(input.path)) files_.emplace(*identity, input);
}

void InputFiles::refuse(const NamedPath& output) const {
  const auto identity = regular_file_identity(output.path);
  if (!identity) return;
  const auto found = files_.find(*identity);
  if (found == files_.end()) return;
  const NamedPath& input = found->second;
  const std::string also = input.path == "-"           ? " ('-', standard input, which the shell opened on that file)"
                           : output.path == input.path ? ""
                                                       : str_cat(" ('", input.path, "')");
  throw Error(str_cat(output.flag, " '", output.path, "' is the same file as ", input.flag, also,
                      ", which this command reads: writing the output there would replace its input; "
                      "write to another file"));
}

void InputFiles::refuse_in_folder(const std::string& folder, const std::vector<std::string>& names) const {
  for (const auto& name : names) refuse({"-o", (fs::path(folder) / name).string()});
}

void refuse_output_over_inputs(const NamedPath& output, const std::vector<NamedPath>& inputs) {
  InputFiles(inputs).refuse(output);
}

StagedFolder::StagedFolder(const std::string& folder) : folder_(folder) {
  std::error_code error;
  made_folder_ = !fs::exists(folder, error);
  create_folder(folder);
  staging_ = (fs::path(folder) / (".staging-" + std::to_string(::getpid()))).string();
  fs::remove_all(staging_, error);  // a crashed run's, with this process id
  create_folder(staging_);
}

StagedFolder::~StagedFolder() {
  std::error_code error;
  fs::remove_all(staging_, error);
  if (!committed_ && made_folder_ && fs::is_empty(folder_, error)) fs::remove(folder_, error);
}

std::string StagedFolder::path(const std::string& name) const { return (fs::path(staging_) / name).string(); }

std::string StagedFolder::final_path(const std::string& name) const { return (fs::path(folder_) / name).string(); }

void StagedFolder::commit(const std::string& manifest) {
  const auto move_into_place = [&](const std::string& name) {
    std::error_code error;
    fs::rename(path(name), final_path(name), error);
    MIXSEQ_CHECK(!error, "cannot move '", path(name), "' to '", final_path(name), "': ", error.message());
  };
  MIXSEQ_CHECK(fs::exists(path(manifest)), "StagedFolder: the manifest '", path(manifest), "' was not written");
  std::error_code error;
  fs::remove(final_path(manifest), error);
  MIXSEQ_CHECK(!error, "cannot remove the old '", final_path(manifest), "': ", error.message());
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(staging_)) names.push_back(entry.path().filename().string());
  for (const auto& name : names)
    if (name != manifest) move_into_place(name);
  move_into_place(manifest);
  committed_ = true;
}

}  // namespace mixseq
