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
  std::string format = "text";          // -f/--format: "text" (sacreBLEU's line) or "json"
  bool json = false;                    // --json: short for --format json
  bool short_signature = false;         // -sh/--short: abbreviated signature keys
  int width = 1;                        // -w/--width: decimals of the score (sacreBLEU's default 1)
};

// Adds the options above to `command`.
void add_scoring_options(CLI::App& command, ScoringOptions& options);

// Checks combinations sacreBLEU would not print (JSON per sentence, a negative width).
void check_scoring_options(const ScoringOptions& options);

// Prints one report on stdout: the number alone (-b), sacreBLEU's JSON, or its text line.
void print_report(const ScoreReport& report, const ScoringOptions& options);

}  // namespace mixseq::cli
