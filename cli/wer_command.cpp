// mixseq wer REF -i HYP [--cer] [--lowercase] [--remove-punctuation] [--details] [--confusions N]
// [--json]: word or character error rate of a recognizer's transcripts, the counts and percentage
// NIST's sclite reports (`sclite -s`, and `-c -e utf-8` for --cer; mixseq/text/error_rate.h says
// how).
//   WER 12.20 % (S 10 D 2 I 3 / N 123 words)
// --confusions N adds what the errors were, as the lists of sclite's detailed report (-o dtl):
// the N most frequent confusion pairs, insertions, deletions, substituted reference words and
// falsely recognized words (0: all), in sclite's order and line format (with --json, a
// "confusions" object of the five lists):
//   CONFUSION PAIRS: 4 kinds, 10 in all
//      1:    7  ->  two ==> four
#include <nlohmann/json.hpp>

#include <cstdio>
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
  std::optional<int64_t> confusions;  // --confusions N: sclite's dtl lists, N entries each (0: all)
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

// The first `limit` entries (all where limit is 0).
template <typename T>
std::vector<T> first(std::vector<T> list, int64_t limit) {
  if (limit > 0 && static_cast<int64_t>(list.size()) > limit) list.resize(static_cast<size_t>(limit));
  return list;
}

template <typename T>
int64_t total_count(const std::vector<T>& list) {
  int64_t total = 0;
  for (const T& entry : list) total += entry.count;
  return total;
}

// One of sclite's dtl lists: a heading with how many kinds and occurrences, then
// "   1:    7  ->  two ==> four" lines (sclite's "%4d: %4d  ->  %s").
template <typename T, typename Describe>
void print_list(const std::string& heading, const std::vector<T>& all, int64_t limit, Describe describe) {
  std::cout << heading << ": " << all.size() << (all.size() == 1 ? " kind, " : " kinds, ") << total_count(all)
            << " in all";
  const auto shown = first(all, limit);
  if (shown.size() < all.size()) std::cout << " (the " << shown.size() << " most frequent)";
  std::cout << '\n';
  char number[32];
  for (size_t i = 0; i < shown.size(); ++i) {
    std::snprintf(number, sizeof number, "%4zu: %4lld  ->  ", i + 1, static_cast<long long>(shown[i].count));
    std::cout << number << describe(shown[i]) << '\n';
  }
}

void print_tally(const ErrorTally& tally, int64_t limit) {
  const auto token = [](const TokenCount& entry) { return entry.token; };
  print_list("CONFUSION PAIRS", tally.confusion_pairs(), limit,
             [](const TokenPairCount& entry) { return entry.reference + " ==> " + entry.hypothesis; });
  print_list("INSERTIONS", tally.insertions(), limit, token);
  print_list("DELETIONS", tally.deletions(), limit, token);
  print_list("SUBSTITUTIONS", tally.substitutions(), limit, token);
  print_list("FALSELY RECOGNIZED", tally.falsely_recognized(), limit, token);
}

nlohmann::ordered_json tally_json(const ErrorTally& tally, int64_t limit) {
  nlohmann::ordered_json record;
  auto& pairs = record["pairs"] = nlohmann::ordered_json::array();
  for (const auto& entry : first(tally.confusion_pairs(), limit))
    pairs.push_back({{"reference", entry.reference}, {"hypothesis", entry.hypothesis}, {"count", entry.count}});
  const auto tokens = [limit](const std::vector<TokenCount>& all) {
    auto list = nlohmann::ordered_json::array();
    for (const auto& entry : first(all, limit)) list.push_back({{"token", entry.token}, {"count", entry.count}});
    return list;
  };
  record["insertions"] = tokens(tally.insertions());
  record["deletions"] = tokens(tally.deletions());
  record["substitutions"] = tokens(tally.substitutions());
  record["falsely_recognized"] = tokens(tally.falsely_recognized());
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
  ErrorTally tally;
  nlohmann::ordered_json utterances = nlohmann::ordered_json::array();
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    UtteranceErrors utterance;
    try {
      utterance = utterance_errors(hypotheses[i], references[i], options);
    } catch (const Error& e) {
      throw Error(str_cat(flags.input, ":", i + 1, " and ", flags.reference, ":", i + 1, ": ", e.what()));
    }
    total += utterance.counts;
    if (flags.confusions) tally.add(utterance);
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
    if (flags.confusions) record["confusions"] = tally_json(tally, *flags.confusions);
    std::cout << record.dump() << '\n';
  } else {
    std::cout << summary_line(total, flags.cer) << '\n';
    if (flags.confusions) print_tally(tally, *flags.confusions);
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
  command->add_option("--confusions", flags->confusions,
                      "Also list the N most frequent confusion pairs, insertions, deletions, substituted and falsely "
                      "recognized words, as sclite's detailed report (-o dtl); 0: all")
      ->check(at_least(0));
  command->add_flag("--json", flags->json, "Print one JSON object (with --details, an 'utterances' list)");
  table.add(command, [flags] { return run_wer(*flags); });
}

}  // namespace mixseq::cli
