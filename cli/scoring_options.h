// What `mixseq bleu` and `mixseq chrf` share: the input files and the output flags, spelled as
// sacreBLEU spells them (sacrebleu/sacrebleu.py), and printing a score the chosen way.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "mixseq/text/score_report.h"

namespace mixseq::cli {

// More decimals than a double holds (17) say nothing; -w 1000000000 printed a gigabyte of zeros.
constexpr int kMaxScoreWidth = 17;

struct ScoringOptions {
  std::vector<std::string> references;  // REF files, one reference per line each
  std::string input = "-";              // -i/--input: the system output; "-" reads stdin
  bool sentence_level = false;          // -sl/--sentence-level: one score per line
  bool score_only = false;              // -b/--score-only: print the number alone
  std::string format = "json";          // -f/--format: "json" (sacreBLEU 2's default) or "text" (its line);
                                        // sentence scores are text lines either way, as in sacreBLEU
  bool json = false;                    // --json: short for --format json
  bool short_signature = false;         // -sh/--short: abbreviated signature keys
  int width = 1;                        // -w/--width: decimals of the score (sacreBLEU's default 1)
};

// Adds the options above to `command`.
void add_scoring_options(CLI::App& command, ScoringOptions& options);

// Checks combinations sacreBLEU would not print (JSON per sentence, a negative width).
void check_scoring_options(const ScoringOptions& options);

// Prints reports on stdout as sacreBLEU does: the numbers alone (-b); JSON (one object, or a list
// of several); or text lines, several aligned at their "=".
void print_reports(const std::vector<ScoreReport>& reports, const ScoringOptions& options);

}  // namespace mixseq::cli
