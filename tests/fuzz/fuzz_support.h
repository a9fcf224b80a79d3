// What every fuzz target shares (docs/reliability.md, "Fuzzing").
//
// A target feeds libFuzzer's bytes to real mixseq code. A mixseq::Error is the promised answer to
// bad input and is caught by expect_clear_errors; anything else escapes to libFuzzer as a finding:
// a crash, a sanitizer report, another exception (uncaught, it aborts), a hang, or a broken
// property that a target checks with fuzz_check (e.g. "what save wrote, load reads back").
//
// Readers of files get the input through files in a folder that this process makes under $TMPDIR
// (/tmp when unset) and removes at exit; nothing is written anywhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq::fuzz {

// Runs `action`; a mixseq::Error (the clear error that bad input must get) is swallowed.
template <typename Action>
void expect_clear_errors(Action&& action) {
  try {
    action();
  } catch (const Error&) {
  }
}

// Aborts with `what` when a property of the code under test fails: libFuzzer saves the input.
inline void fuzz_check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz property failed: %s\n", what);
  std::abort();
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The parts of an input separated by lines "%%" ("a\n%%\nb" -> {"a", "b"}), at most max_parts (the
// last part keeps any further separators). Several files or fields fit in one readable seed.
std::vector<std::string> split_parts(std::string_view input, size_t max_parts);

// This process's scratch folder under $TMPDIR, made on first use and removed at exit.
const std::string& scratch_dir();

// Writes `content` to <scratch_dir>/<name> (replacing it) and returns the path.
std::string write_scratch_file(const std::string& name, std::string_view content);

// The bytes of a file.
std::string read_whole_file(const std::string& path);

}  // namespace mixseq::fuzz
