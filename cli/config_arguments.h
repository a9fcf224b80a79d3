// Command-line overrides of a typed configuration: every "--a.b.c VALUE" (or "--a.b.c=VALUE")
// the subcommand's own options did not take sets the field at YAML path a.b.c.
#pragma once

#include <string>
#include <vector>

#include "mixseq/util/config.h"

namespace mixseq::cli {

// Pairs up the leftover arguments; anything that is not "--path value" throws mixseq::Error.
// (ConfigOverride and apply_config_overrides are util/config.h's.)
std::vector<ConfigOverride> parse_config_overrides(const std::vector<std::string>& arguments);

}  // namespace mixseq::cli
