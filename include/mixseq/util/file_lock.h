// FileLock: an exclusive advisory lock (flock(2)) on a file, held while the object lives. The
// kernel releases it when the process ends, however it ends (a crash, SIGKILL), so a lock is
// never left stale and there is nothing to clean up by hand. The holder writes its pid into the
// file, so a process that is refused can say who holds it. The lock belongs to one open file:
// a second FileLock on the same path is refused even within the same process. The file itself
// stays on disk after release; that is harmless, the next holder rewrites it.
#pragma once

#include <cstdint>
#include <string>

namespace mixseq {

class FileLock {
 public:
  // Creates `path` if needed and tries once to lock it, without waiting; check held().
  explicit FileLock(const std::string& path);
  ~FileLock();
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  bool held() const { return held_; }
  // When not held: the pid the holder wrote into the file; 0 when it has not written it yet.
  int64_t holder_pid() const { return holder_pid_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool held_ = false;
  int64_t holder_pid_ = 0;
};

}  // namespace mixseq
