// mixseq bleu REF [REF...] -i HYP: corpus or sentence BLEU, the same numbers sacreBLEU 2.x prints.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/text/bleu.h"
#include "mixseq/text/scoring_input.h"
#include "mixseq/util/log.h"
#include "scoring_options.h"
#include "option_checks.h"

namespace mixseq::cli {
namespace {

// sacreBLEU warns once 100 hypotheses end in " .", a sign of tokenized output; BLEU with its own
// tokenizer expects detokenized text.
constexpr int64_t kTokenizedLinesBeforeWarning = 100;

struct BleuCommandOptions {
  ScoringOptions scoring;
  std::string tokenize = "13a";        // --tokenize/-tok
  bool lowercase = false;              // --lowercase/-lc
  std::string smooth_method = "exp";   // --smooth-method/-s
  std::optional<double> smooth_value;  // --smooth-value/-sv
  bool force = false;                  // --force: no warning about tokenized input
};

BleuOptions to_bleu_options(const BleuCommandOptions& flags) {
  BleuOptions options;
  options.tokenizer = parse_bleu_tokenizer(flags.tokenize);
  options.lowercase = flags.lowercase;
  options.smoothing = parse_bleu_smoothing(flags.smooth_method);
  options.smooth_value = flags.smooth_value;
  if (flags.smooth_value && options.smoothing != BleuSmoothing::kFloor && options.smoothing != BleuSmoothing::kAddK)
    log_info("bleu: warning: --smooth-value is ignored with --smooth-method ", flags.smooth_method,
             " (only floor and add-k take a value), as in sacreBLEU");
  options.effective_order = flags.scoring.sentence_level;  // as sacreBLEU's --sentence-level does
  return options;
}

void warn_if_tokenized(const std::vector<std::string>& hypotheses) {
  const auto tokenized = std::count_if(hypotheses.begin(), hypotheses.end(), [](const std::string& line) {
    return line.size() >= 2 && line.compare(line.size() - 2, 2, " .") == 0;
  });
  if (tokenized >= kTokenizedLinesBeforeWarning)
    log_info("bleu: warning: ", tokenized, " of ", hypotheses.size(),
             " hypothesis lines end in a tokenized period (' .'); BLEU tokenizes by itself and expects ",
             "detokenized output, so this likely lowers the score. Detokenize, or pass --force to silence this.");
}

int run_bleu(const BleuCommandOptions& flags) {
  check_scoring_options(flags.scoring);
  const BleuOptions options = to_bleu_options(flags);
  const ScoringInput input = read_scoring_input(flags.scoring.input, flags.scoring.references);
  if (flags.scoring.sentence_level) {
    for (size_t i = 0; i < input.hypotheses.size(); ++i) {
      std::vector<std::string> references;
      for (const auto& stream : input.references) references.push_back(stream[i]);
      print_report(bleu_report(sentence_bleu(input.hypotheses[i], references, options), options), flags.scoring);
    }
    return 0;
  }
  if (!flags.force) warn_if_tokenized(input.hypotheses);
  print_report(bleu_report(corpus_bleu(input.hypotheses, input.references, options), options), flags.scoring);
  return 0;
}

}  // namespace

void add_bleu_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("bleu", "BLEU of a system output against references, as sacreBLEU 2.x computes it");
  auto flags = std::make_shared<BleuCommandOptions>();
  add_scoring_options(*command, flags->scoring);
  command->add_option("--tokenize", flags->tokenize, "Tokenizer (-tok): 13a, intl, char or none")->capture_default_str();
  command->add_flag("--lowercase", flags->lowercase, "Lowercase hypotheses and references first (-lc)");
  command->add_option("-s,--smooth-method", flags->smooth_method, "Smoothing: exp, floor, add-k or none")
      ->capture_default_str();
  command->add_option("--smooth-value", flags->smooth_value,
                      "Value for floor (default 0.1) and add-k (default 1) smoothing (-sv)")
      ->check(at_least(0));
  command->add_flag("--force", flags->force, "Do not warn about output that looks tokenized");
  table.add(command, [flags] { return run_bleu(*flags); });
}

}  // namespace mixseq::cli
