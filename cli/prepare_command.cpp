// mixseq prepare: raw text -> checked, segmented token datasets (see include/mixseq/data/prepare.h);
// with --task speech, manifests of transcribed audio -> a speech dataset (data/speech_data.h).
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "mixseq/data/prepare.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/util/error.h"
#include "option_checks.h"

namespace mixseq::cli {

void add_prepare_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("prepare", "Check, segment and binarize raw parallel or monolingual text");
  auto options = std::make_shared<PrepareOptions>();
  auto task = std::make_shared<std::string>("text");
  auto speech = std::make_shared<SpeechPrepareOptions>();
  command->add_option("--task", *task, "text (token datasets) or speech (a manifest of audio files: --train, "
                                       "--valid, --test name TSV or JSON-lines manifests)")
      ->check(CLI::IsMember({"text", "speech"}))
      ->capture_default_str();
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
  command->add_option("--sample-rate", speech->sample_rate, "speech: Hz every utterance is resampled to")
      ->check(at_least(1000))
      ->capture_default_str();
  command->add_option("--min-seconds", speech->min_seconds, "speech: skip shorter utterances; 0 = keep all")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--max-seconds", speech->max_seconds, "speech: skip longer utterances; 0 = keep all")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--symbols", speech->symbols,
                      "speech: english (OpenSeq2Seq's 28 characters), data (the training transcripts' characters) "
                      "or spm:MODEL (the pieces of a SentencePiece model from `mixseq spm train`)")
      ->check([](const std::string& value) {
        return value == "english" || value == "data" || value.rfind("spm:", 0) == 0
                   ? std::string()
                   : "must be english, data or spm:MODEL, not '" + value + "'";
      })
      ->capture_default_str();
  command->add_option("--workers", speech->workers, "speech: threads reading and resampling audio")
      ->check(at_least(1))
      ->capture_default_str();
  table.add(command, [=] {
    if (*task == "speech") {
      for (const char* text_only : {"--source-lang", "--target-lang", "--tokenizer", "--vocabulary", "--vocab-max-size",
                                    "--vocab-min-count", "--vocab-pad-to-multiple", "--max-length",
                                    "--max-length-ratio", "--drop-non-latin1", "--drop-malformed-utf8"})
        MIXSEQ_CHECK(command->count(text_only) == 0, "prepare --task speech: ", text_only,
                     " is an option of text corpora");
      SpeechPrepareOptions prepared = *speech;
      prepared.out_dir = options->output_dir;
      if (!options->train_prefix.empty()) prepared.manifests["train"] = options->train_prefix;
      if (!options->valid_prefix.empty()) prepared.manifests["valid"] = options->valid_prefix;
      if (!options->test_prefix.empty()) prepared.manifests["test"] = options->test_prefix;
      std::ostringstream report;
      for (const auto& [split, counts] : prepare_speech_data(prepared)) {
        report << split << ": " << counts.utterances << " utterances, " << counts.seconds << " s";
        for (const auto& [reason, count] : counts.skipped) report << "; skipped " << count << " (" << reason << ")";
        report << '\n';
      }
      std::cout << report.str() << std::flush;
      return 0;
    }
    for (const char* speech_only : {"--sample-rate", "--min-seconds", "--max-seconds", "--symbols", "--workers"})
      MIXSEQ_CHECK(command->count(speech_only) == 0, "prepare: ", speech_only, " is an option of --task speech");
    std::cout << format_prepare_report(prepare_corpus(*options)) << std::flush;
    return 0;
  });
}

}  // namespace mixseq::cli
