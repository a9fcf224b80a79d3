#include "mixseq/util/scratch_folder.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {

// mkdtemp rather than a random number in the name: the name is new and the folder made in one
// step, so two processes never share one.
std::filesystem::path make_scratch_folder(const std::string& prefix) {
  MIXSEQ_CHECK(prefix.find('/') == std::string::npos, "ScratchFolder: the prefix '", prefix, "' holds a '/'");
  std::error_code error;
  const auto temp = std::filesystem::temp_directory_path(error);
  MIXSEQ_CHECK(!error, "cannot find the temporary folder ($TMPDIR or /tmp): ", error.message());
  const std::string pattern = (temp / (prefix + "XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  MIXSEQ_CHECK(mkdtemp(name.data()) != nullptr, "cannot make a scratch folder '", pattern, "': ", std::strerror(errno));
  return name.data();
}

ScratchFolder::~ScratchFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace mixseq
