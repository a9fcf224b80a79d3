// Config keys by their dotted paths (util/config.h): which keys a YAML text sets, whether a path
// lies within a section, and YAML output without some of the fields. A training run uses them to
// refuse a key only another task reads and to store its own task's settings alone
// (train/training_tasks.h).
#pragma once

#include <string>
#include <vector>

#include "mixseq/util/config.h"

namespace mixseq {

// A key a config file or the command line sets.
struct ConfigKeyPlace {
  std::string path;   // dotted: "criterion.smoothing"
  std::string where;  // for messages: "train.yaml:12", or "--criterion.smoothing"
};

// `path` is one of `prefixes` or lies within one of them ("lm.tgt_len" within "lm").
bool within_any(const std::string& path, const std::vector<std::string>& prefixes);

// Every leaf key the YAML text sets, in order, with "source:line"; throws mixseq::Error naming the
// line for text that is not YAML.
std::vector<ConfigKeyPlace> config_keys_in_yaml(const std::string& yaml, const std::string& source);
std::vector<ConfigKeyPlace> config_keys_in_file(const std::string& path);

// As config_to_yaml, without the fields and sections at `excluded` (dotted paths).
std::string config_to_yaml_excluding(const ConfigFields& fields, const std::vector<std::string>& excluded);

}  // namespace mixseq
