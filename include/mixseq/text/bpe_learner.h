// learn_bpe: learns byte pair encoding merges from word counts, with the exact merge order of
// subword-nmt's learn_bpe.py, so that the codes file it gives is byte for byte the reference's.
//
// Each step merges the most frequent pair of adjacent symbols; equal frequencies go to the larger
// pair (Python compares the (left, right) tuples, i.e. UTF-8 byte order). Like the reference, the
// search for the best pair runs over a pruned copy of the pair statistics, rebuilt from the full
// statistics when its best pair falls below the pruning threshold; this bookkeeping decides the
// winner in corner cases, so it is reproduced as is, with the index from pairs to the words that
// contain them that makes each merge cost only the words it touches.
//
// learn_bpe is a pure function; it uses one thread.
#pragma once

#include <cstdint>

#include "mixseq/text/bpe_codes.h"
#include "mixseq/text/word_counts.h"

namespace mixseq {

struct BpeLearnOptions {
  int64_t symbols = 10000;     // merges to learn (learn_bpe.py -s); fewer if pairs run out first
  int64_t min_frequency = 2;   // stop when the best pair occurs fewer times than this; <= 1 never stops early
  bool total_symbols = false;  // -t: subtract the distinct characters (word-internal + word-final) from
                               // `symbols`, so that it bounds the whole symbol vocabulary
};

// Learns version 0.2 codes from `words` (counts in first-seen order; see WordCounts).
BpeCodes learn_bpe(const WordCounts& words, const BpeLearnOptions& options);

}  // namespace mixseq
