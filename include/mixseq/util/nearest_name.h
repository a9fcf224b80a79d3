// "Did you mean ...?" for a name that is not one of the known ones (a config key, a subcommand),
// by edit distance, so a typo gets its fix and anything else gets the list of names.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mixseq {

// Levenshtein distance: insertions, deletions and substitutions of bytes.
size_t edit_distance(const std::string& a, const std::string& b);

// "; did you mean 'train'?" when a known name is close enough to `unknown` to be a typo (at most 2
// edits, or a third of its length), else "; known: a, b, c"; "" when nothing is known.
std::string did_you_mean(const std::string& unknown, const std::vector<std::string>& known);

}  // namespace mixseq
