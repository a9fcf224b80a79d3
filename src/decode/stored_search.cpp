#include "mixseq/decode/stored_search.h"

#include "mixseq/util/config.h"

namespace mixseq {

BeamSearchOptions stored_search_options(const std::string& config_yaml, const std::string& source) {
  BeamSearchOptions search;
  read_config_yaml_sections(config_yaml, source + " (stored config)",
                            [&](ConfigVisitor& v) { v.section("validation_search", search); });
  search.nbest = 1;             // one validation translation per sentence; the caller asks for more
  search.suppress_eos = false;  // a benchmark setting, never a translation's
  return search;
}

BeamSearchOptions resolve_search_options(const std::string& config_yaml, const std::string& source,
                                         const SearchOverrides& overrides) {
  auto search = stored_search_options(config_yaml, source);
  if (overrides.beam_size) search.beam_size = *overrides.beam_size;
  if (overrides.length_penalty) search.length_penalty = *overrides.length_penalty;
  if (overrides.coverage_penalty) search.coverage_penalty = *overrides.coverage_penalty;
  if (overrides.max_len_a) search.max_len_a = *overrides.max_len_a;
  if (overrides.max_len_b) search.max_len_b = *overrides.max_len_b;
  if (overrides.nbest) search.nbest = *overrides.nbest;
  return search;
}

}  // namespace mixseq
