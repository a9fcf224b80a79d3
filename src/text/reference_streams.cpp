#include "text/reference_streams.h"

#include "mixseq/util/error.h"

namespace mixseq {

void check_reference_streams(const std::vector<std::string>& hypotheses,
                             const std::vector<std::vector<std::string>>& references) {
  MIXSEQ_CHECK(!hypotheses.empty(), "no hypotheses to score");
  MIXSEQ_CHECK(!references.empty(), "no reference streams; pass at least one");
  for (size_t r = 0; r < references.size(); ++r)
    MIXSEQ_CHECK(references[r].size() == hypotheses.size(), "reference stream ", r + 1, " has ",
                 references[r].size(), " segments but there are ", hypotheses.size(),
                 " hypotheses; every stream needs one string per hypothesis (\"\" for none)");
}

std::vector<const std::string*> segment_references(const std::vector<std::vector<std::string>>& references,
                                                   size_t segment) {
  std::vector<const std::string*> refs;
  for (const auto& stream : references) refs.push_back(&stream[segment]);
  return refs;
}

}  // namespace mixseq
