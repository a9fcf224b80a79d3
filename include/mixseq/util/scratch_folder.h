// ScratchFolder: a private folder of one's own under the system's temporary folder ($TMPDIR or
// /tmp), made with mkdtemp(3) (a new name, created atomically, mode 0700) and removed with all it
// holds when the object goes. For files that must exist on disk only for a moment (a checkpoint's
// vocabulary handed to a loader that reads files, a test's data).
#pragma once

#include <filesystem>
#include <string>

namespace mixseq {

// Makes a new folder <temp>/<prefix>XXXXXX (mkdtemp) and returns its path; an Error naming the
// folder when it cannot be made. `prefix` must not hold '/'. The caller removes it.
std::filesystem::path make_scratch_folder(const std::string& prefix);

// The folder of make_scratch_folder, removed with all it holds when the object goes.
class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& prefix) : path_(make_scratch_folder(prefix)) {}
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // <folder>/<name>, as text.
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace mixseq
