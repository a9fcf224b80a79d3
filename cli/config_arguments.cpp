#include "config_arguments.h"

#include "mixseq/util/error.h"

namespace mixseq::cli {

std::vector<ConfigOverride> parse_config_overrides(const std::vector<std::string>& arguments) {
  std::vector<ConfigOverride> overrides;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    MIXSEQ_CHECK(argument.rfind("--", 0) == 0 && argument.size() > 2, "unexpected argument '", argument,
                 "'; configuration overrides look like --train.precision bf16");
    const auto equals = argument.find('=');
    if (equals != std::string::npos) {
      overrides.push_back({argument.substr(2, equals - 2), argument.substr(equals + 1)});
      continue;
    }
    MIXSEQ_CHECK(i + 1 < arguments.size(), "option ", argument, " needs a value");
    overrides.push_back({argument.substr(2), arguments[++i]});
  }
  return overrides;
}

}  // namespace mixseq::cli
