// Command-line overrides of a typed configuration: every "--a.b.c VALUE" (or "--a.b.c=VALUE")
// the subcommand's own options did not take sets the field at YAML path a.b.c.
#pragma once

#include <string>
#include <vector>

#include "mixseq/util/config.h"

namespace mixseq::cli {

struct ConfigOverride {
  std::string path;
  std::string value;
};

// Pairs up the leftover arguments; anything that is not "--path value" throws mixseq::Error.
std::vector<ConfigOverride> parse_config_overrides(const std::vector<std::string>& arguments);

void apply_config_overrides(const std::vector<ConfigOverride>& overrides, const ConfigFields& fields);

}  // namespace mixseq::cli
