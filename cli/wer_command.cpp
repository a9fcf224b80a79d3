// mixseq wer REF -i HYP [--cer] [--lowercase] [--remove-punctuation] [--details] [--json]: word or
// character error rate of a recognizer's transcripts, the counts and percentage NIST's sclite
// reports (`sclite -s`, and `-c -e utf-8` for --cer; mixseq/text/error_rate.h says how).
//   WER 12.20 % (S 10 D 2 I 3 / N 123 words)
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/text/error_rate.h"
#include "mixseq/text/score_report.h"
#include "mixseq/text/scoring_input.h"
#include "mixseq/util/error.h"

namespace mixseq::cli {
namespace {

constexpr int kRateDecimals = 2;  // of the percentages in the text output; JSON has every digit

struct WerFlags {
  std::string reference;           // REF: one reference transcript per line
  std::string input = "-";         // -i/--input: one hypothesis per line; "-" reads stdin
  bool cer = false;                // --cer: characters (sclite -c) instead of words
  bool lowercase = false;          // --lowercase/-lc: compare lowercased text (sclite folds ASCII only)
  bool remove_punctuation = false; // --remove-punctuation: drop Unicode punctuation first
  bool details = false;            // --details: every line's counts and alignment before the total
  bool json = false;               // --json: one JSON object instead of text
};

// "WER 12.20 % (S 10 D 2 I 3 / N 123 words)"; "WER undefined (... / N 0 words)" as sclite's UNDEF.
std::string summary_line(const ErrorCounts& counts, bool cer) {
  const std::optional<double> rate = error_rate(counts);
  return str_cat(cer ? "CER " : "WER ", rate ? format_decimal(*rate, kRateDecimals) + " %" : "undefined", " (S ",
                 counts.substitutions, " D ", counts.deletions, " I ", counts.insertions, " / N ",
                 counts.reference_length(), cer ? " characters)" : " words)");
}

// The counts under the names the JSON output uses; the rate is null where sclite prints UNDEF.
nlohmann::ordered_json counts_json(const ErrorCounts& counts, bool cer) {
  const std::optional<double> rate = error_rate(counts);
  nlohmann::ordered_json record;
  record[cer ? "cer" : "wer"] = rate ? nlohmann::ordered_json(*rate) : nlohmann::ordered_json(nullptr);
  record["correct"] = counts.correct;
  record["substitutions"] = counts.substitutions;
  record["deletions"] = counts.deletions;
  record["insertions"] = counts.insertions;
  record[cer ? "reference_chars" : "reference_words"] = counts.reference_length();
  return record;
}

int run_wer(const WerFlags& flags) {
  const ScoringInput input = read_scoring_input(flags.input, {flags.reference});
  ErrorRateOptions options;
  options.unit = flags.cer ? ErrorRateUnit::kCharacter : ErrorRateUnit::kWord;
  options.lowercase = flags.lowercase;
  options.remove_punctuation = flags.remove_punctuation;
  const std::vector<std::string>& hypotheses = input.hypotheses;
  const std::vector<std::string>& references = input.references.front();

  ErrorCounts total;
  nlohmann::ordered_json utterances = nlohmann::ordered_json::array();
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const UtteranceErrors utterance = utterance_errors(hypotheses[i], references[i], options);
    total += utterance.counts;
    if (!flags.details) continue;
    if (flags.json) {
      nlohmann::ordered_json record = {{"line", i + 1}};
      record.update(counts_json(utterance.counts, flags.cer));
      utterances.push_back(std::move(record));
    } else {
      std::cout << "line " << i + 1 << ": " << summary_line(utterance.counts, flags.cer) << '\n';
      for (const std::string& line : format_alignment(utterance)) std::cout << line << '\n';
      std::cout << '\n';
    }
  }

  if (flags.json) {
    nlohmann::ordered_json record = counts_json(total, flags.cer);
    record["hypotheses"] = hypotheses.size();
    if (flags.details) record["utterances"] = std::move(utterances);
    std::cout << record.dump() << '\n';
  } else {
    std::cout << summary_line(total, flags.cer) << '\n';
  }
  return 0;
}

}  // namespace

void add_wer_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("wer", "Word (or character) error rate of transcripts, as NIST's sclite counts it");
  auto flags = std::make_shared<WerFlags>();
  command->add_option("reference", flags->reference, "Reference transcripts, one utterance per line")->required();
  command->add_option("-i,--input", flags->input, "Hypothesis transcripts, one per line ('-': stdin)")
      ->capture_default_str();
  command->add_flag("--cer", flags->cer, "Character error rate: the words' characters, spaces not counted (sclite -c)");
  command->add_flag("--lowercase", flags->lowercase, "Lowercase hypotheses and references first (-lc)");
  command->add_flag("--remove-punctuation", flags->remove_punctuation,
                    "Remove Unicode punctuation (category P) from hypotheses and references first");
  command->add_flag("--details", flags->details, "Print every line's counts and alignment before the total");
  command->add_flag("--json", flags->json, "Print one JSON object (with --details, an 'utterances' list)");
  table.add(command, [flags] { return run_wer(*flags); });
}

}  // namespace mixseq::cli
