// BpeApplier: segments text into subword units with BPE codes, byte for byte as subword-nmt's
// apply_bpe.py (version 0.3.9) does with the same options.
//
// Words are what line.strip('\r\n ').split(' ') gives: only single ASCII spaces separate words,
// extra spaces vanish, and the "\r\n " characters before and after the text of a line are kept. Each
// word is segmented by applying, as long as any applies, the highest-priority merge among its
// adjacent symbol pairs (all its non-overlapping occurrences at once); "</w>" marks the end of the
// word and is removed from the output; every piece but a word's last gets the separator ("@@").
// A word of one character, or one that matches a glossary as a whole, is left as it is.
//
// Options, as apply_bpe.py's: a vocabulary ("<word> <count>" lines, e.g. from
// `bpe learn --write-vocabulary`) makes every piece that is not in it (with the separator for
// non-final pieces) be split back by undoing merges until the parts are known or cannot be split;
// glossaries (Python regular expressions) cut matching parts out of words and keep them whole.
//
// Threading: the const methods may be called from several threads at once. They share one cache
// of segmented words (like apply_bpe.py's, never cleared), split into shards behind their own
// mutexes. apply_file and count_output_words spread lines over `threads` workers and keep the
// input order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mixseq/text/bpe_codes.h"
#include "mixseq/text/word_counts.h"

namespace mixseq {

struct BpeApplyOptions {
  std::string separator = "@@";  // appended to every piece of a word but its last
  std::string vocabulary;        // "<word> <count>" file; pieces missing from it are split back; "" disables
  std::optional<int64_t> vocabulary_threshold;  // vocabulary entries counted fewer times are left out;
                                                // nullopt keeps every entry. Left with no entry, the
                                                // vocabulary filters nothing (as in apply_bpe.py)
  std::vector<std::string> glossaries;  // Python regular expressions (docs/bpe.md lists the syntax
                                        // supported) for words or parts of words never split; empty disables
  int threads = 0;                      // workers of apply_file and count_output_words; 0 = one per core
};

class BpeApplier {
 public:
  // Reads options.vocabulary and compiles options.glossaries; throws mixseq::Error on a bad file
  // line ("<path>:<line>: ...") or a bad regular expression.
  BpeApplier(BpeCodes codes, const BpeApplyOptions& options);
  ~BpeApplier();
  BpeApplier(BpeApplier&&) noexcept;
  BpeApplier& operator=(BpeApplier&&) noexcept;

  // The pieces of one word, separator attached to all but the last: "lowest" -> {"low@@", "est"}.
  std::vector<std::string> segment_word(std::string_view word) const;

  // The pieces of every word of a line, in order (apply_bpe.py's segment, before the join).
  std::vector<std::string> segment_line(std::string_view line) const;

  // apply_bpe.py's process_line: the segmented words joined by spaces, with the "\r\n " characters
  // that lead and trail `line` kept; a line of only such characters comes back unchanged.
  std::string process_line(std::string_view line) const;

  // `apply_bpe.py -c codes -i input -o output`: "-" is stdin / stdout; the output is written
  // atomically. Lines are cut as apply_bpe.py cuts them (at \n, \r, and the other line boundaries
  // of Python's str.splitlines, each kept with its line). Malformed UTF-8 throws "<path>:<line>: ...".
  void apply_file(const std::string& input, const std::string& output) const;

  // The word counts of `input` segmented, as learn_joint_bpe_and_vocab.py counts them for
  // --write-vocabulary (it segments lines cut at \n, \r and \r\n, then counts the output's words).
  WordCounts count_output_words(const std::string& input) const;

  const BpeCodes& codes() const;
  const BpeApplyOptions& options() const;

 private:
  class Impl;
  std::unique_ptr<const Impl> impl_;
};

}  // namespace mixseq
