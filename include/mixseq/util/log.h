// Logging. Human-readable lines go to stderr with a timestamp ("2026-11-21 10:00:00 ...");
// results a program is asked for go to stdout, so that they can be piped.
#pragma once

#include <string>

#include "mixseq/util/error.h"

namespace mixseq {

void log_line(const std::string& message);

// In a data-parallel job: `prefix` ("[rank 1] ") starts every line; `enabled` false silences
// this process's log lines (ranks other than 0). Errors are still printed by the caller.
void configure_log_lines(const std::string& prefix, bool enabled);

template <typename... Args>
void log_info(const Args&... parts) {
  log_line(str_cat(parts...));
}

}  // namespace mixseq
