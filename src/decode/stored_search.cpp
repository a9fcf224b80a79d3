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

}  // namespace mixseq
