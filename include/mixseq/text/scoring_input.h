// Reading a system output and its reference files the way sacreBLEU 2.x's command line reads
// them (sacrebleu/sacrebleu.py, utils.smart_open), so that `mixseq bleu` and `mixseq chrf` score
// the same segments:
//   - files are UTF-8 split at "\n" only; a "\r" inside a line stays (open(..., newline="\n"));
//     standard input ("-") is read with universal newlines, so "\r" and "\r\n" end lines too;
//   - every line loses its trailing whitespace (Python's str.rstrip()), leading whitespace stays;
//   - a byte-order mark is not removed: sacreBLEU opens files as "utf-8", not "utf-8-sig", so
//     U+FEFF stays glued to the first word of the first line and costs it its matches.
// Problems are reported as mixseq::Error naming the file (and line): unreadable files, malformed
// UTF-8, files with different line counts, and lines whose references are all empty (sacreBLEU
// raises "Empty or `None` reference sentence found." for those).
#pragma once

#include <string>
#include <vector>

namespace mixseq {

struct ScoringInput {
  std::vector<std::string> hypotheses;               // one per line of the system output
  std::vector<std::vector<std::string>> references;  // [reference file][line]
};

// Reads `hypothesis_path` ("-" for standard input) and every file of `reference_paths`.
ScoringInput read_scoring_input(const std::string& hypothesis_path, const std::vector<std::string>& reference_paths);

}  // namespace mixseq
