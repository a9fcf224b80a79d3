// mixseq bleu / mixseq chrf REF [REF...] -i HYP [-m bleu chrf]: corpus or sentence BLEU and
// chrF / chrF++, the same numbers and output sacreBLEU 2.x prints. Both commands take every
// metric's flags, as sacreBLEU's one command does; the command's name is the default metric.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/text/bleu.h"
#include "mixseq/text/chrf.h"
#include "mixseq/text/scoring_input.h"
#include "mixseq/util/log.h"
#include "option_checks.h"
#include "scoring_options.h"

namespace mixseq::cli {
namespace {

// sacreBLEU warns once 100 hypotheses end in " .", a sign of tokenized output; BLEU with its own
// tokenizer expects detokenized text.
constexpr int64_t kTokenizedLinesBeforeWarning = 100;

struct MetricFlags {
  ScoringOptions scoring;
  std::vector<std::string> metrics;    // -m/--metrics: bleu, chrf, in any order (printed sorted)
  std::string tokenize = "13a";        // BLEU: --tokenize/-tok
  bool lowercase = false;              // BLEU: --lowercase/-lc (in `mixseq chrf`, chrF's as well)
  std::string smooth_method = "exp";   // BLEU: --smooth-method/-s
  std::optional<double> smooth_value;  // BLEU: --smooth-value/-sv
  bool force = false;                  // BLEU: --force, no warning about tokenized input
  ChrfOptions chrf;                    // chrF: --chrf-*
};

BleuOptions to_bleu_options(const MetricFlags& flags) {
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

int run_metrics(MetricFlags flags) {
  check_scoring_options(flags.scoring);
  std::sort(flags.metrics.begin(), flags.metrics.end());  // sacreBLEU prints them sorted by name
  flags.metrics.erase(std::unique(flags.metrics.begin(), flags.metrics.end()), flags.metrics.end());
  MIXSEQ_CHECK(!flags.scoring.sentence_level || flags.metrics.size() == 1,
               "--sentence-level scores one metric at a time (as sacreBLEU); got -m with ", flags.metrics.size());
  const bool bleu = std::find(flags.metrics.begin(), flags.metrics.end(), "bleu") != flags.metrics.end();
  const BleuOptions bleu_options = to_bleu_options(flags);
  const ScoringInput input = read_scoring_input(flags.scoring.input, flags.scoring.references);

  if (flags.scoring.sentence_level) {
    for (size_t i = 0; i < input.hypotheses.size(); ++i) {
      std::vector<std::string> references;
      for (const auto& stream : input.references) references.push_back(stream[i]);
      print_reports({bleu ? bleu_report(sentence_bleu(input.hypotheses[i], references, bleu_options), bleu_options)
                          : chrf_report(sentence_chrf(input.hypotheses[i], references, flags.chrf), flags.chrf)},
                    flags.scoring);
    }
    return 0;
  }
  if (bleu && !flags.force) warn_if_tokenized(input.hypotheses);
  std::vector<ScoreReport> reports;
  for (const auto& metric : flags.metrics) {
    if (metric == "bleu")
      reports.push_back(bleu_report(corpus_bleu(input.hypotheses, input.references, bleu_options), bleu_options));
    else
      reports.push_back(chrf_report(corpus_chrf(input.hypotheses, input.references, flags.chrf), flags.chrf));
  }
  print_reports(reports, flags.scoring);
  return 0;
}

void add_metric_command(CLI::App& app, CommandTable& table, const std::string& metric, const std::string& help) {
  auto* command = app.add_subcommand(metric, help);
  auto flags = std::make_shared<MetricFlags>();
  flags->metrics = {metric};
  add_scoring_options(*command, flags->scoring);
  command->add_option("-m,--metrics", flags->metrics, "Metrics to compute, printed in name order: bleu, chrf")
      ->check(CLI::IsMember({"bleu", "chrf"}))
      ->capture_default_str();
  command->add_option("--tokenize", flags->tokenize, "BLEU's tokenizer (-tok): 13a, intl, char or none")
      ->capture_default_str();
  command->add_flag("--lowercase", flags->lowercase,
                    metric == "chrf" ? "Lowercase hypotheses and references first (-lc), for chrF and BLEU"
                                     : "Lowercase hypotheses and references for BLEU (-lc)");
  command->add_option("-s,--smooth-method", flags->smooth_method, "BLEU's smoothing: exp, floor, add-k or none")
      ->capture_default_str();
  command->add_option("--smooth-value", flags->smooth_value,
                      "Value for BLEU's floor (default 0.1) and add-k (default 1) smoothing (-sv)")
      ->check(at_least(0));
  command->add_flag("--force", flags->force, "Do not warn about output that looks tokenized");
  ChrfOptions& chrf = flags->chrf;
  command->add_option("--chrf-char-order", chrf.char_order, "chrF's character n-gram order (-cc)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--chrf-word-order", chrf.word_order, "chrF's word n-gram order, 2 for chrF++ (-cw)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--chrf-beta", chrf.beta, "chrF's weight of recall relative to precision")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_flag("--chrf-whitespace", chrf.whitespace, "Keep whitespace in chrF's character n-grams");
  command->add_flag("--chrf-lowercase", chrf.lowercase, "Lowercase hypotheses and references for chrF first");
  command->add_flag("--chrf-eps-smoothing", chrf.eps_smoothing,
                    "Average chrF's per-order F-scores with epsilon smoothing (chrF++.py, Moses, NLTK)");
  table.add(command, [flags, metric] {
    MetricFlags resolved = *flags;
    // `mixseq chrf -lc` lowercased chrF before -m existed, and still does.
    if (metric == "chrf" && resolved.lowercase) resolved.chrf.lowercase = true;
    return run_metrics(resolved);
  });
}

}  // namespace

void add_bleu_command(CLI::App& app, CommandTable& table) {
  add_metric_command(app, table, "bleu", "BLEU of a system output against references, as sacreBLEU 2.x computes it");
}

void add_chrf_command(CLI::App& app, CommandTable& table) {
  add_metric_command(app, table, "chrf",
                     "chrF / chrF++ of a system output against references, as sacreBLEU 2.x computes it");
}

}  // namespace mixseq::cli
