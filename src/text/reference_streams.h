// The corpus layout BLEU and chrF share (mixseq/text/bleu.h): hypotheses, and reference streams
// with one string per hypothesis, "" where a stream has no reference for a segment.
#pragma once

#include <string>
#include <vector>

namespace mixseq {

// Throws mixseq::Error unless there are hypotheses, at least one stream, and every stream has one
// string per hypothesis.
void check_reference_streams(const std::vector<std::string>& hypotheses,
                             const std::vector<std::vector<std::string>>& references);

// The non-empty references of `segment`; throws mixseq::Error when there is none, which sacreBLEU
// rejects too ("Empty or `None` reference sentence found.").
std::vector<const std::string*> segment_references(const std::vector<std::vector<std::string>>& references,
                                                   size_t segment);

// sacreBLEU's nrefs: the number of references every segment so far has, or -1 ("var") once two
// segments differ. Call it with the count of each segment in turn, starting from `num_refs` = 0.
int update_num_refs(int num_refs, size_t segment, size_t segment_refs);

}  // namespace mixseq
