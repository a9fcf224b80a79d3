// Logging. Human-readable lines go to stderr with a timestamp ("2026-11-21 10:00:00 ...");
// results a program is asked for go to stdout, so that they can be piped.
#pragma once

#include <string>

#include "mixseq/util/error.h"

namespace mixseq {

void log_line(const std::string& message);

template <typename... Args>
void log_info(const Args&... parts) {
  log_line(str_cat(parts...));
}

}  // namespace mixseq
