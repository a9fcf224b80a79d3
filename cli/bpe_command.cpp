// mixseq bpe learn | apply: byte pair encoding with the output of subword-nmt's learn_bpe.py,
// learn_joint_bpe_and_vocab.py and apply_bpe.py (docs/bpe.md).
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/text/bpe_applier.h"
#include "mixseq/text/bpe_learner.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "option_checks.h"

namespace mixseq::cli {
namespace {

struct LearnArgs {
  std::vector<std::string> inputs = {"-"};
  std::string output = "-";
  BpeLearnOptions options;
  bool dict_input = false;
  std::vector<std::string> vocabularies;
  std::string separator = "@@";
};

struct ApplyArgs {
  std::string codes;
  std::string input = "-";
  std::string output = "-";
  int64_t merges = -1;
  BpeApplyOptions options;
  int64_t vocabulary_threshold = 0;
};

// The process-wide --threads (main() gives it to configure_threads); 0 means one per core.
int global_threads(const CLI::App& app) { return app.get_option("--threads")->as<int>(); }

void run_learn(const LearnArgs& args, int threads) {
  if (!args.vocabularies.empty()) {
    MIXSEQ_CHECK(args.vocabularies.size() == args.inputs.size(), "--write-vocabulary names ", args.vocabularies.size(),
                 " files for ", args.inputs.size(), " inputs; give one vocabulary file per --input");
    MIXSEQ_CHECK(!args.dict_input, "--write-vocabulary segments the input texts; it cannot be used with --dict-input");
    for (const auto& input : args.inputs)
      MIXSEQ_CHECK(input != "-", "--write-vocabulary reads each input twice; give files, not stdin (\"-\")");
  }
  WordCounts counts;
  if (args.dict_input) {
    for (const auto& input : args.inputs)
      for_each_word_count(input, [&](std::string_view word, int64_t count) { counts.add(word, count); });
  } else {
    counts = count_words(args.inputs);
  }
  const BpeCodes codes = learn_bpe(counts, args.options);
  codes.save(args.output);
  log_info("bpe learn: ", codes.merges().size(), " merges from ", counts.size(), " word types, written to ",
           args.output == "-" ? "stdout" : args.output);
  if (args.vocabularies.empty()) return;
  BpeApplyOptions apply_options;
  apply_options.separator = args.separator;
  apply_options.threads = threads;
  const BpeApplier applier(codes, apply_options);
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const WordCounts vocabulary = applier.count_output_words(args.inputs[i]);
    vocabulary.save(args.vocabularies[i]);
    log_info("bpe learn: ", vocabulary.size(), " tokens of ", args.inputs[i], " written to ", args.vocabularies[i]);
  }
}

void add_learn_command(CLI::App& bpe, const CLI::App& app, CommandTable& table) {
  auto* command = bpe.add_subcommand(
      "learn", "Learn BPE merges (subword-nmt learn_bpe.py; with several inputs and --write-vocabulary, "
               "learn_joint_bpe_and_vocab.py)");
  auto args = std::make_shared<LearnArgs>();
  command->add_option("-i,--input", args->inputs, "Input texts, learnt from as one corpus (\"-\": stdin)")
      ->capture_default_str();
  command->add_option("-o,--output", args->output, "Codes file (\"-\": stdout)")->capture_default_str();
  command->add_option("-s,--symbols", args->options.symbols, "Merge operations to learn")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--min-frequency", args->options.min_frequency, "Stop when no pair occurs this often")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_flag("--dict-input", args->dict_input, "Inputs are \"<word> <count>\" vocabularies, not text");
  command->add_flag("-t,--total-symbols", args->options.total_symbols,
                    "Subtract the number of distinct characters from --symbols (a total vocabulary budget)");
  command->add_option("--write-vocabulary", args->vocabularies,
                      "Segment each input with the new codes and write its \"<token> <count>\" vocabulary here "
                      "(one file per input), for bpe apply --vocabulary");
  command->add_option("--separator", args->separator, "Separator for --write-vocabulary")->capture_default_str();
  table.add(command, [args, &app] {
    run_learn(*args, global_threads(app));
    return 0;
  });
}

void add_apply_command(CLI::App& bpe, const CLI::App& app, CommandTable& table) {
  auto* command = bpe.add_subcommand("apply", "Segment text with BPE codes (subword-nmt apply_bpe.py)");
  auto args = std::make_shared<ApplyArgs>();
  command->add_option("-c,--codes", args->codes, "Codes file from bpe learn or subword-nmt")->required();
  command->add_option("-i,--input", args->input, "Input text (\"-\": stdin)")->capture_default_str();
  command->add_option("-o,--output", args->output, "Segmented text (\"-\": stdout)")->capture_default_str();
  command->add_option("-m,--merges", args->merges, "Use only the first N merges (-1: all)")
      ->check(at_least(-1))
      ->capture_default_str();
  command->add_option("-s,--separator", args->options.separator, "Appended to every piece of a word but its last")
      ->capture_default_str();
  command->add_option("--vocabulary", args->options.vocabulary,
                      "\"<token> <count>\" file (bpe learn --write-vocabulary): pieces missing from it are split "
                      "back into smaller known pieces");
  auto* threshold = command->add_option("--vocabulary-threshold", args->vocabulary_threshold,
                                        "Tokens counted fewer times than this in --vocabulary count as unknown")
                        ->check(at_least(0));
  command->add_option("--glossaries", args->options.glossaries,
                      "Python regular expressions for words or parts of words never split (quote each one)");
  table.add(command, [args, threshold, &app] {
    ApplyArgs run = *args;
    if (threshold->count() > 0) {
      MIXSEQ_CHECK(!run.options.vocabulary.empty(), "--vocabulary-threshold needs --vocabulary <file>");
      run.options.vocabulary_threshold = run.vocabulary_threshold;
    }
    MIXSEQ_CHECK(run.merges >= -1, "--merges must be -1 (all) or >= 0, got ", run.merges);
    run.options.threads = global_threads(app);
    const BpeApplier applier(BpeCodes::load(run.codes, run.merges), run.options);
    applier.apply_file(run.input, run.output);
    return 0;
  });
}

}  // namespace

void add_bpe_command(CLI::App& app, CommandTable& table) {
  auto* bpe = app.add_subcommand("bpe", "Byte pair encoding compatible with subword-nmt (learn, apply)");
  bpe->require_subcommand(1);
  add_learn_command(*bpe, app, table);
  add_apply_command(*bpe, app, table);
}

}  // namespace mixseq::cli
