#include "fuzz_support.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace mixseq::fuzz {

std::vector<std::string> split_parts(std::string_view input, size_t max_parts) {
  constexpr std::string_view kSeparator = "\n%%\n";
  std::vector<std::string> parts;
  while (parts.size() + 1 < max_parts) {
    const size_t at = input.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.emplace_back(input.substr(0, at));
    input.remove_prefix(at + kSeparator.size());
  }
  parts.emplace_back(input);
  return parts;
}

namespace {

std::string make_scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path base = tmp && *tmp ? tmp : "/tmp";
  // The targets write files: never into a device or kernel folder, whatever $TMPDIR says.
  const std::string resolved = std::filesystem::weakly_canonical(base).string();
  for (const std::string forbidden : {"/dev", "/proc", "/sys"})
    fuzz_check(resolved != forbidden && resolved.rfind(forbidden + "/", 0) != 0,
               "$TMPDIR must not be under /dev, /proc or /sys");
  std::string pattern = (base / "mixseq-fuzz-XXXXXX").string();
  fuzz_check(mkdtemp(pattern.data()) != nullptr, "cannot make a scratch folder under $TMPDIR");
  return pattern;
}

}  // namespace

const std::string& scratch_dir() {
  // Never destroyed: the exit handler that removes the folder runs after static destructors would.
  static const std::string* const dir = [] {
    const auto* made = new std::string(make_scratch_dir());
    std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
    return made;
  }();
  return *dir;
}

std::string write_scratch_file(const std::string& name, std::string_view content) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  fuzz_check(out.good(), "cannot write a scratch file");
  return path;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace mixseq::fuzz
