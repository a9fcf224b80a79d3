// The beam-search flags that translate and serve share. Their defaults are the checkpoint's:
// a flag given on the command line overrides that one setting of the stored validation_search
// (decode/stored_search.h), the others stay as the run validated with.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "mixseq/decode/beam_search.h"
#include "mixseq/decode/stored_search.h"

namespace mixseq::cli {

class SearchFlags {
 public:
  // Adds --beam-size, --length-penalty, --coverage-penalty, --max-len-a, --max-len-b and --nbest.
  void add_to(CLI::App& command);

  // The stored validation_search of `config_yaml` (from checkpoint `source`) with the given
  // flags applied.
  BeamSearchOptions resolve(const std::string& config_yaml, const std::string& source) const;

  // The flags given on the command line, each unset one left to the checkpoint.
  SearchOverrides overrides() const;

 private:
  BeamSearchOptions given_;  // values parsed from the flags; only those with a count() are used
  CLI::Option* beam_size_ = nullptr;
  CLI::Option* length_penalty_ = nullptr;
  CLI::Option* coverage_penalty_ = nullptr;
  CLI::Option* max_len_a_ = nullptr;
  CLI::Option* max_len_b_ = nullptr;
  CLI::Option* nbest_ = nullptr;
};

}  // namespace mixseq::cli
