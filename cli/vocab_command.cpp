// mixseq vocab build: one vocabulary file from tokenized text (several files make a joint one).
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/log.h"
#include "option_checks.h"

namespace mixseq::cli {
namespace {

struct VocabBuildPaths {
  std::vector<std::string> inputs;
  std::string output;
};

std::string percent(double fraction) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(2) << 100.0 * fraction << "%";
  return text.str();
}

}  // namespace

void add_vocab_command(CLI::App& app, CommandTable& table) {
  auto* vocab = app.add_subcommand("vocab", "Vocabularies: subword pieces <-> ids");
  vocab->require_subcommand(1);
  auto* command = vocab->add_subcommand("build", "Count the pieces of tokenized text and write a vocabulary");
  auto paths = std::make_shared<VocabBuildPaths>();
  auto options = std::make_shared<VocabularyOptions>();
  command->add_option("-i,--input", paths->inputs, "Tokenized text, pieces separated by spaces (repeatable)")
      ->required();
  command->add_option("-o,--output", paths->output, "Vocabulary file to write ('-': stdout)")->required();
  command->add_option("--max-size", options->max_size, "Most entries, specials included, before padding (0: no limit)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--min-count", options->min_count, "Leave out pieces seen fewer times")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--pad-to-multiple", options->pad_to_multiple, "Pad the size to a multiple of this (1: no padding)")
      ->check(at_least(1))
      ->capture_default_str();
  table.add(command, [paths, options] {
    const TokenCounts counts = count_tokens(paths->inputs);
    const Vocabulary vocabulary = Vocabulary::build(counts, *options);
    vocabulary.save(paths->output);
    const VocabularyCoverage coverage = measure_coverage(vocabulary, counts);
    log_info("vocab build: wrote ", paths->output, " with ", vocabulary.size(), " entries");
    log_info("vocab build: coverage ", percent(coverage.coverage()), " of ", coverage.token_count, " tokens; ",
             coverage.dropped_type_count, " of ", coverage.type_count, " types dropped (they map to <unk>)");
    return 0;
  });
}

}  // namespace mixseq::cli
