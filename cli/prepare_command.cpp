// mixseq prepare: raw text -> checked, segmented token datasets (see include/mixseq/data/prepare.h).
#include <iostream>
#include <memory>

#include "commands.h"
#include "mixseq/data/prepare.h"
#include "option_checks.h"

namespace mixseq::cli {

void add_prepare_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("prepare", "Check, segment and binarize raw parallel or monolingual text");
  auto options = std::make_shared<PrepareOptions>();
  command->add_option("--source-lang", options->source_lang, "Source file suffix (<prefix>.<lang>)")
      ->capture_default_str();
  command->add_option("--target-lang", options->target_lang, "Target file suffix; \"\" = monolingual corpus")
      ->capture_default_str();
  command->add_option("--train", options->train_prefix, "Training files prefix");
  command->add_option("--valid", options->valid_prefix, "Validation files prefix");
  command->add_option("--test", options->test_prefix, "Test files prefix");
  command->add_option("--tokenizer", options->tokenizer, "bpe:<codes>, spm:<model> or none (split on spaces)")
      ->capture_default_str();
  command->add_option("--vocabulary", options->vocabulary, "Existing vocabulary file (default: build from --train)");
  command->add_option("--vocab-max-size", options->vocabulary_options.max_size,
                      "Most vocabulary entries before padding; 0 = no limit")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--vocab-min-count", options->vocabulary_options.min_count,
                      "Leave out pieces seen fewer times")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--vocab-pad-to-multiple", options->vocabulary_options.pad_to_multiple,
                      "Pad the vocabulary size to a multiple of this; 1 = off")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("-o,--output-dir", options->output_dir, "Folder for vocab.txt, *.bin and dataset.json")
      ->required();
  command->add_option("--max-length", options->max_length, "Drop training pairs with a side over this many pieces; 0 = off")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--max-length-ratio", options->max_length_ratio,
                      "Drop training pairs whose length ratio exceeds this; 0 = off")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_flag("--drop-non-latin1", options->drop_non_latin1,
                    "Drop training pairs with characters outside Latin-1 (GNMT recipe)");
  command->add_flag("--drop-malformed-utf8", options->drop_malformed_utf8,
                    "Drop training lines with malformed UTF-8 instead of stopping");
  table.add(command, [=] {
    std::cout << format_prepare_report(prepare_corpus(*options)) << std::flush;
    return 0;
  });
}

}  // namespace mixseq::cli
