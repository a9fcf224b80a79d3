#include "scoring_options.h"

#include <iostream>

#include "mixseq/util/error.h"
#include "option_checks.h"

namespace mixseq::cli {

void add_scoring_options(CLI::App& command, ScoringOptions& options) {
  command.add_option("references", options.references, "Reference files, one segment per line")->required();
  command.add_option("-i,--input", options.input, "System output, one segment per line ('-': stdin)")
      ->capture_default_str();
  command.add_flag("--sentence-level", options.sentence_level, "Print one score per line (-sl)");
  command.add_flag("-b,--score-only", options.score_only, "Print only the score");
  command.add_option("-f,--format", options.format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command.add_flag("--json", options.json, "Same as --format json: sacreBLEU's JSON object");
  command.add_flag("--short", options.short_signature, "Abbreviated signature keys in text output (-sh)");
  command.add_option("-w,--width", options.width, "Decimals of the score")
      ->check(in_range(0, kMaxScoreWidth))
      ->capture_default_str();
}

void check_scoring_options(const ScoringOptions& options) {
  MIXSEQ_CHECK(options.width >= 0 && options.width <= kMaxScoreWidth, "--width must be 0..", kMaxScoreWidth,
               " decimals, got ", options.width);
  MIXSEQ_CHECK(!(options.sentence_level && (options.json || options.format == "json")),
               "--json is not available with --sentence-level: sacreBLEU prints sentence scores as text lines ",
               "only; drop --json (or -f json)");
}

void print_report(const ScoreReport& report, const ScoringOptions& options) {
  if (options.score_only) {
    std::cout << format_decimal(report.score, options.width) << '\n';
  } else if (options.json || options.format == "json") {
    std::cout << format_score_json(report, options.width) << '\n';
  } else {
    std::cout << format_score_line(report, options.width, options.short_signature) << '\n';
  }
}

}  // namespace mixseq::cli
