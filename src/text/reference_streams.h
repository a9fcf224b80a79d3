// The corpus layout BLEU and chrF share (mixseq/text/bleu.h): hypotheses, and reference streams
// with one string per hypothesis. An empty string is an empty reference, as in sacreBLEU since 2.2
// ("allow empty references"): it counts in nrefs, and BLEU may take its length 0 as the closest.
#pragma once

#include <string>
#include <vector>

namespace mixseq {

// Throws mixseq::Error unless there are hypotheses, at least one stream, and every stream has one
// string per hypothesis.
void check_reference_streams(const std::vector<std::string>& hypotheses,
                             const std::vector<std::vector<std::string>>& references);

// The references of `segment`, one from each stream.
std::vector<const std::string*> segment_references(const std::vector<std::vector<std::string>>& references,
                                                   size_t segment);

}  // namespace mixseq
