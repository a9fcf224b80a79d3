// Order-preserving parallel map over the lines of a text file, for the commands that turn one
// line into one line (`mixseq spm encode`, `mixseq spm decode`). The input is read in rounds
// of threads x chunk_lines lines; each worker transforms a contiguous slice of the round and
// the results are written in input order, so memory stays bounded on files of any size.
// `transform` is called from several threads at once and must be safe to call concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "mixseq/util/line_reader.h"

namespace mixseq {

struct ParallelLinesOptions {
  int threads = 0;              // worker threads; 0 = one per core, 1 = run on the calling thread
  int64_t chunk_lines = 2048;   // lines per worker per round; memory holds threads * chunk_lines lines
};

using LineTransform = std::function<std::string(const std::string& line)>;

// Writes transform(line) + "\n" to `out` for every line of `in`, in input order; returns the
// number of lines. An exception from `transform` is rethrown as mixseq::Error
// "<path>:<line>: <what>" for the first failing line of its round; nothing of that round is written.
int64_t transform_lines(LineReader& in, std::ostream& out, const LineTransform& transform,
                        const ParallelLinesOptions& options = {});

}  // namespace mixseq
