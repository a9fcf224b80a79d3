// mixseq chrf REF [REF...] -i HYP: corpus or sentence chrF / chrF++, the same numbers sacreBLEU
// 2.x prints.
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/text/chrf.h"
#include "mixseq/text/scoring_input.h"
#include "scoring_options.h"
#include "option_checks.h"

namespace mixseq::cli {
namespace {

struct ChrfCommandOptions {
  ScoringOptions scoring;
  ChrfOptions chrf;
};

int run_chrf(const ChrfCommandOptions& flags) {
  check_scoring_options(flags.scoring);
  const ScoringInput input = read_scoring_input(flags.scoring.input, flags.scoring.references);
  if (flags.scoring.sentence_level) {
    for (size_t i = 0; i < input.hypotheses.size(); ++i) {
      std::vector<std::string> references;
      for (const auto& stream : input.references) references.push_back(stream[i]);
      print_report(chrf_report(sentence_chrf(input.hypotheses[i], references, flags.chrf), flags.chrf), flags.scoring);
    }
    return 0;
  }
  print_report(chrf_report(corpus_chrf(input.hypotheses, input.references, flags.chrf), flags.chrf), flags.scoring);
  return 0;
}

}  // namespace

void add_chrf_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("chrf", "chrF / chrF++ of a system output against references, as sacreBLEU 2.x computes it");
  auto flags = std::make_shared<ChrfCommandOptions>();
  add_scoring_options(*command, flags->scoring);
  ChrfOptions& chrf = flags->chrf;
  command->add_option("--chrf-char-order", chrf.char_order, "Character n-gram order (-cc)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--chrf-word-order", chrf.word_order, "Word n-gram order, 2 for chrF++ (-cw)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--chrf-beta", chrf.beta, "Weight of recall relative to precision")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_flag("--chrf-whitespace", chrf.whitespace, "Keep whitespace in character n-grams");
  command->add_flag("--lowercase,--chrf-lowercase", chrf.lowercase, "Lowercase hypotheses and references first (-lc)");
  command->add_flag("--chrf-eps-smoothing", chrf.eps_smoothing,
                    "Average per-order F-scores with epsilon smoothing (chrF++.py, Moses, NLTK)");
  table.add(command, [flags] { return run_chrf(*flags); });
}

}  // namespace mixseq::cli
