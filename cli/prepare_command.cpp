// mixseq prepare: raw text -> checked, segmented token datasets (see include/mixseq/data/prepare.h);
// with --task speech, manifests of transcribed audio -> a speech dataset (data/speech_data.h); with
// --task classify, `text<TAB>label` files -> a classification dataset (data/classification_data.h).
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "mixseq/data/classification_data.h"
#include "mixseq/data/prepare.h"
#include "mixseq/models/registry.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/util/error.h"
#include "option_checks.h"

namespace mixseq::cli {

void add_prepare_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("prepare", "Check, segment and binarize raw parallel or monolingual text");
  auto options = std::make_shared<PrepareOptions>();
  auto task = std::make_shared<std::string>("text");
  auto speech = std::make_shared<SpeechPrepareOptions>();
  auto pretrained = std::make_shared<std::string>();
  command->add_option("--task", *task, "text (token datasets), speech (a manifest of audio files: --train, "
                                       "--valid, --test name TSV or JSON-lines manifests) or classify "
                                       "(`text<TAB>label` files)")
      ->check(CLI::IsMember({"text", "speech", "classify"}))
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
  command->add_option("--max-length", options->max_length, "text: drop training pairs with a side over this many pieces; classify: cut texts to this many; 0 = off")
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
  command->add_option("--pretrained", *pretrained,
                      "classify: a language model's checkpoint whose vocabulary and tokenizer the data takes "
                      "(train.classify.pretrained then fine-tunes it); default: a vocabulary built from --train");
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
    if (*task == "classify") {
      for (const char* other : {"--source-lang", "--target-lang", "--max-length-ratio", "--drop-non-latin1",
                                "--drop-malformed-utf8", "--vocabulary", "--sample-rate", "--min-seconds",
                                "--max-seconds", "--symbols", "--workers"})
        MIXSEQ_CHECK(command->count(other) == 0, "prepare --task classify: ", other, " is not an option of it");
      ClassificationPrepareOptions prepared;
      prepared.out_dir = options->output_dir;
      prepared.tokenizer = options->tokenizer;
      prepared.vocabulary_options = options->vocabulary_options;
      prepared.max_length = options->max_length;
      if (!options->train_prefix.empty()) prepared.files["train"] = options->train_prefix;
      if (!options->valid_prefix.empty()) prepared.files["valid"] = options->valid_prefix;
      if (!options->test_prefix.empty()) prepared.files["test"] = options->test_prefix;
      PretrainedText text;
      if (!pretrained->empty()) {
        MIXSEQ_CHECK(command->count("--tokenizer") == 0 && command->count("--vocab-max-size") == 0 &&
                         command->count("--vocab-min-count") == 0,
                     "prepare --task classify: --pretrained brings the vocabulary and tokenizer; leave out "
                     "--tokenizer and the --vocab-* options");
        const auto contents = read_checkpoint_contents(*pretrained);
        const std::string arch = stored_model_config(contents, *pretrained).arch;
        MIXSEQ_CHECK(model_family(arch) == kLanguageModelFamily, "prepare --task classify: --pretrained '",
                     *pretrained, "' is a ", model_family_description(model_family(arch)), " ('", arch,
                     "'), not a language model");
        text = {contents.vocabulary_text, contents.tokenizer_kind, contents.tokenizer_model};
        prepared.pretrained = &text;
      }
      std::ostringstream report;
      for (const auto& [split, counts] : prepare_classification_data(prepared)) {
        report << split << ": " << counts.examples << " examples, " << counts.tokens << " tokens ("
               << counts.unknown_tokens << " unknown), labels";
        for (const auto& [label, count] : counts.label_counts) report << ' ' << label << ':' << count;
        if (counts.truncated > 0) report << "; " << counts.truncated << " cut to --max-length";
        report << '\n';
      }
      std::cout << report.str() << std::flush;
      return 0;
    }
    MIXSEQ_CHECK(pretrained->empty(), "prepare: --pretrained is an option of --task classify");
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
