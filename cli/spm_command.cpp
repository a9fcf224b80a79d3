// mixseq spm {train,encode,decode}: SentencePiece models through libsentencepiece.
// encode and decode turn one line into one line, spread over --threads workers in input order.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "mixseq/text/sentencepiece_tokenizer.h"
#include "mixseq/text/sentencepiece_train.h"
#include "mixseq/util/utf8.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/parallel_lines.h"
#include "option_checks.h"

namespace mixseq::cli {
namespace {

// The value of mixseq's global --threads (0: one per core), also accepted after the subcommand.
int global_threads(const CLI::App& app) {
  const auto* option = app.get_option("--threads");
  return option->count() > 0 ? option->as<int>() : 0;
}

std::string join_pieces(const std::vector<std::string>& pieces) {
  std::string line;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) line += ' ';
    line += pieces[i];
  }
  return line;
}

// Pieces are never empty and hold no space (SentencePiece writes a space as "▁"), so empty
// fields between spaces are skipped, which gives what spm_decode gives.
std::vector<std::string> split_pieces(const std::string& line) {
  std::vector<std::string> pieces;
  for (const std::string_view field : split_on_space(line))
    if (!field.empty()) pieces.emplace_back(field);
  return pieces;
}

std::string encode_line(const SentencePieceTokenizer& tokenizer, const std::string& line) {
  return join_pieces(tokenizer.encode(line));
}

std::string decode_line(const SentencePieceTokenizer& tokenizer, const std::string& line) {
  return tokenizer.decode(split_pieces(line));
}

struct TransformPaths {
  std::string model;
  std::string input = "-";
  std::string output = "-";
};

void add_transform_options(CLI::App* command, TransformPaths& paths) {
  command->add_option("-m,--model", paths.model, "SentencePiece model (<prefix>.model)")->required();
  command->add_option("-i,--input", paths.input, "Input text, one sentence per line ('-': stdin)")
      ->capture_default_str();
  command->add_option("-o,--output", paths.output, "Output, one line per input line ('-': stdout)")
      ->capture_default_str();
}

// Runs `transform` over every line of paths.input with the model loaded, writing paths.output.
int run_transform(const char* name, const TransformPaths& paths, int threads,
                  std::string (*transform)(const SentencePieceTokenizer&, const std::string&)) {
  const SentencePieceTokenizer tokenizer(paths.model);
  LineReader in(paths.input);
  OutputFile out(paths.output);
  ParallelLinesOptions options;
  options.threads = threads;
  const int64_t lines = transform_lines(
      in, out.stream(), [&](const std::string& line) { return transform(tokenizer, line); }, options);
  out.commit();
  log_info("spm ", name, ": ", lines, " lines from ", in.path(), " with ", paths.model);
  return 0;
}

// spm_train's --input=a.txt,b.txt: a value that is not a file itself is several inputs, split at
// its commas (so that a missing one is named alone: "cannot open 'b.txt'", not 'a.txt,b.txt');
// a path that holds a comma and exists stays one.
std::vector<std::string> split_comma_separated_inputs(const std::vector<std::string>& values) {
  std::vector<std::string> paths;
  for (const auto& value : values) {
    std::vector<std::string> parts;
    for (size_t start = 0, comma; start <= value.size(); start = comma + 1) {
      comma = std::min(value.find(',', start), value.size());
      parts.push_back(value.substr(start, comma - start));
    }
    const bool several = !std::filesystem::exists(value) && parts.size() > 1;
    if (several)
      paths.insert(paths.end(), parts.begin(), parts.end());
    else
      paths.push_back(value);
  }
  return paths;
}

void add_train(CLI::App& app, CLI::App* spm, CommandTable& table) {
  auto* command = spm->add_subcommand("train", "Train a SentencePiece model on plain text");
  auto options = std::make_shared<SentencePieceTrainOptions>();
  // spm_train's own spellings work too (--model_prefix, --input=a.txt,b.txt), so its commands
  // can be reused as they are.
  command->add_option("--input", options->input_paths,
                      "Training text, one sentence per line (repeatable, or comma-separated as spm_train's)")
      ->required();
  command->add_option("--model-prefix,--model_prefix", options->model_prefix, "Writes <prefix>.model and <prefix>.vocab")
      ->required();
  command->add_option("--vocab-size,--vocab_size", options->vocab_size, "Pieces in the model, <unk> <s> </s> included")
      ->check(in_range(1, INT32_MAX))  // SentencePiece counts pieces in int32
      ->capture_default_str();
  command->add_option("--model-type,--model_type", options->model_type, "Segmentation algorithm")
      ->check(CLI::IsMember({"unigram", "bpe", "char", "word"}))
      ->capture_default_str();
  command->add_option("--character-coverage,--character_coverage", options->character_coverage,
                      "Share of characters spelled by the model (0.9995 for Chinese/Japanese)")
      ->check(in_range(0, 1))  // 0 is refused by train_sentencepiece, with advice
      ->capture_default_str();
  command->add_option("--input-sentence-size,--input_sentence_size", options->input_sentence_size,
                      "Sentences sampled for training (0: all)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--shuffle-input-sentence,--shuffle_input_sentence", options->shuffle_input_sentence,
                      "With --input-sentence-size: sample at random (true) or take the first (false)")
      ->capture_default_str();
  command->add_option("--seed", options->seed, "Seed for the sampling")
      ->check(in_range(0, UINT32_MAX - 1))  // SentencePiece reads UINT32_MAX as "seed from std::random_device"
      ->capture_default_str();
  command->add_option("--user-defined-symbols,--user_defined_symbols", options->user_defined_symbols,
                      "Pieces always kept whole, e.g. '<sep>' (repeatable, or comma-separated as spm_train's)")
      ->delimiter(',');
  command->add_flag("--verbose", options->log_progress, "Show SentencePiece's training log");
  table.add(command, [&app, options] {
    options->num_threads = global_threads(app);
    options->input_paths = split_comma_separated_inputs(options->input_paths);
    const int64_t lines = train_sentencepiece(*options);
    log_info("spm train: wrote ", options->model_prefix, ".model and ", options->model_prefix, ".vocab (",
             options->model_type, ", ", options->vocab_size, " pieces) from ", lines, " lines");
    return 0;
  });
}

void add_encode(CLI::App& app, CLI::App* spm, CommandTable& table) {
  auto* command = spm->add_subcommand("encode", "Text -> pieces separated by spaces, one line per line");
  auto paths = std::make_shared<TransformPaths>();
  add_transform_options(command, *paths);
  table.add(command, [&app, paths] {
    return run_transform("encode", *paths, global_threads(app), encode_line);
  });
}

void add_decode(CLI::App& app, CLI::App* spm, CommandTable& table) {
  auto* command = spm->add_subcommand("decode", "Pieces separated by spaces -> text, one line per line");
  auto paths = std::make_shared<TransformPaths>();
  add_transform_options(command, *paths);
  table.add(command, [&app, paths] {
    return run_transform("decode", *paths, global_threads(app), decode_line);
  });
}

}  // namespace

void add_spm_command(CLI::App& app, CommandTable& table) {
  auto* spm = app.add_subcommand("spm", "SentencePiece: train a model, encode and decode text");
  spm->require_subcommand(1);
  add_train(app, spm, table);
  add_encode(app, spm, table);
  add_decode(app, spm, table);
}

}  // namespace mixseq::cli
