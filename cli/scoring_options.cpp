#include "scoring_options.h"

#include <algorithm>
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
  command.add_option("-f,--format", options.format, "Output format: json (sacreBLEU 2's default) or text")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command.add_flag("--json", options.json, "Same as --format json");
  command.add_flag("--short", options.short_signature, "Abbreviated signature keys in text output (-sh)");
  command.add_option("-w,--width", options.width, "Decimals of the score")
      ->check(in_range(0, kMaxScoreWidth))
      ->capture_default_str();
}

void check_scoring_options(const ScoringOptions& options) {
  MIXSEQ_CHECK(options.width >= 0 && options.width <= kMaxScoreWidth, "--width must be 0..", kMaxScoreWidth,
               " decimals, got ", options.width);
  MIXSEQ_CHECK(!(options.sentence_level && options.json),
               "--json is not available with --sentence-level: sacreBLEU prints sentence scores as text lines ",
               "only; drop --json");
}

void print_reports(const std::vector<ScoreReport>& reports, const ScoringOptions& options) {
  const bool json = (options.json || options.format == "json") && !options.sentence_level;
  std::vector<std::string> items;
  for (const auto& report : reports) {
    items.push_back(options.score_only ? format_decimal(report.score, options.width)
                    : json             ? format_score_json(report, options.width)
                                       : format_score_line(report, options.width, options.short_signature));
  }
  if (json && items.size() > 1) {  // a JSON list, even of bare scores (-b), as sacreBLEU prints it
    std::cout << "[\n";
    for (size_t i = 0; i < items.size(); ++i) std::cout << items[i] << (i + 1 < items.size() ? ",\n" : "\n");
    std::cout << "]\n";
    return;
  }
  // sacreBLEU right-aligns the names and signatures of several text lines so that their " = " line up.
  size_t widest = 0;
  const bool align = !json && !options.score_only;
  if (align)
    for (const auto& item : items) widest = std::max(widest, item.find(" = "));
  for (const auto& item : items) std::cout << std::string(align ? widest - item.find(" = ") : 0, ' ') << item << '\n';
}

}  // namespace mixseq::cli
