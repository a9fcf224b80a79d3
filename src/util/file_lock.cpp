#include "mixseq/util/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "mixseq/util/error.h"

namespace mixseq {

FileLock::FileLock(const std::string& path) : path_(path) {
  // O_CLOEXEC: a child process (e.g. a spawned tool) must not inherit the lock and keep it alive.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  MIXSEQ_CHECK(fd_ >= 0, "cannot open the lock file '", path, "': ", std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
    held_ = true;
    const std::string pid = std::to_string(::getpid()) + "\n";
    const bool written = ::ftruncate(fd_, 0) == 0 &&
                         ::pwrite(fd_, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
    (void)written;  // the pid is only a hint for a refused process; the lock is what counts
    return;
  }
  const int error = errno;
  if (error != EWOULDBLOCK) {
    ::close(fd_);
    throw Error(str_cat("cannot lock '", path, "': ", std::strerror(error)));
  }
  char text[32] = {};
  if (::pread(fd_, text, sizeof text - 1, 0) > 0) holder_pid_ = std::strtoll(text, nullptr, 10);
  ::close(fd_);
  fd_ = -1;
}

FileLock::FileLock(FileLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), held_(other.held_), holder_pid_(other.holder_pid_) {
  other.fd_ = -1;
  other.held_ = false;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor of the open file releases the lock
}

}  // namespace mixseq
