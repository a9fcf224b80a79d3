#include "mixseq/data/prepare.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <optional>
#include <sstream>

#include "mixseq/data/prepared_data.h"
#include "mixseq/data/token_dataset.h"
#include "mixseq/text/tokenizer.h"
#include "mixseq/util/utf8.h"
#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"

namespace mixseq {
namespace {

constexpr int64_t kChunkLines = 8192;     // pairs segmented in parallel at a time
constexpr size_t kExamplesPerReason = 3;  // "<file>:<line>" examples printed per drop reason

enum class SplitRole { kTraining, kEvaluation };

struct SplitFiles {
  std::string name;
  std::string source, target;  // target empty for a monolingual corpus
  SplitRole role;
};

// One pair as read, then as segmented; `problem` names why it is dropped (or flagged).
struct PairWork {
  std::string source, target;
  int64_t line = 0;
  std::vector<std::string> source_pieces, target_pieces;
  std::string problem;
  std::string problem_file;
};

std::string split_path(const std::string& prefix, const std::string& lang) {
  return lang.empty() ? prefix : prefix + "." + lang;
}

bool is_latin1(std::string_view text) {
  for (const char32_t c : decode_utf8(text))
    if (c > 0xFF) return false;
  return true;
}

class SplitPreparer {
 public:
  SplitPreparer(const PrepareOptions& options, const Tokenizer& tokenizer) : options_(options), tokenizer_(tokenizer) {}

  // Reads, checks and segments the split, calling `use` on each pair that is kept.
  template <typename Use>
  SplitReport run(const SplitFiles& files, Use use) const {
    SplitReport report;
    report.name = files.name;
    const bool parallel = !files.target.empty();
    LineReader source(files.source);
    std::optional<LineReader> target;
    if (parallel) target.emplace(files.target);
    source.check_utf8 = false;  // checked per pair below, to report or drop
    if (target) target->check_utf8 = false;

    std::vector<PairWork> chunk;
    for (bool more = true; more;) {
      chunk.clear();
      std::string line;
      while (static_cast<int64_t>(chunk.size()) < kChunkLines && source.next(line)) {
        PairWork pair;
        pair.source = std::move(line);
        pair.line = source.line_number();
        if (target && !target->next(pair.target)) throw count_mismatch(source, *target);
        chunk.push_back(std::move(pair));
      }
      more = static_cast<int64_t>(chunk.size()) == kChunkLines;
      // A fatal problem is kept per pair and the first in file order raised, whatever thread
      // met one first: the error names the first bad line, as a serial pass would.
      std::vector<std::exception_ptr> errors(chunk.size());
      at::parallel_for(0, static_cast<int64_t>(chunk.size()), 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          try {
            examine(chunk[i], files, parallel);
          } catch (...) {
            errors[i] = std::current_exception();
          }
        }
      });
      for (const auto& error : errors)
        if (error) std::rethrow_exception(error);
      for (auto& pair : chunk) {
        ++report.lines;
        if (!pair.problem.empty()) {
          note_problem(report, pair, files.role);
          if (files.role == SplitRole::kTraining) continue;
        }
        ++report.kept;
        use(pair, report);
      }
    }
    std::string extra_line;
    if (target && target->next(extra_line)) throw count_mismatch(source, *target);
    return report;
  }

 private:
  // Finds the first problem of a pair (if any) and segments it. A problem drops a training
  // pair; in a validation or test split it is only reported, except malformed UTF-8.
  void examine(PairWork& pair, const SplitFiles& files, bool parallel) const {
    const bool training = files.role == SplitRole::kTraining;
    for (const auto& [text, path] : {std::pair{&pair.source, &files.source}, std::pair{&pair.target, &files.target}}) {
      if (const auto bad = find_invalid_utf8(*text)) {
        if (!training || !options_.drop_malformed_utf8)
          throw input_error(*path, pair.line, "malformed UTF-8 at byte ", *bad + 1,
                            "; repair the file (e.g. iconv -c -f UTF-8 -t UTF-8)",
                            training ? " or drop such pairs with --drop-malformed-utf8" : "");
        return flag(pair, "malformed UTF-8", *path);
      }
    }
    pair.source_pieces = tokenizer_.encode(pair.source);
    if (!parallel) return;  // language-model text: every line counts, empty ones too
    pair.target_pieces = tokenizer_.encode(pair.target);

    const auto source_length = static_cast<int64_t>(pair.source_pieces.size());
    const auto target_length = static_cast<int64_t>(pair.target_pieces.size());
    const auto [shorter, longer] = std::minmax(source_length, target_length);
    if (source_length == 0) return flag(pair, "empty line", files.source);
    if (target_length == 0) return flag(pair, "empty line", files.target);
    if (training && options_.drop_non_latin1) {
      if (!is_latin1(pair.source)) return flag(pair, "not Latin-1", files.source);
      if (!is_latin1(pair.target)) return flag(pair, "not Latin-1", files.target);
    }
    if (options_.max_length > 0 && longer > options_.max_length)
      return flag(pair, "too long", source_length > options_.max_length ? files.source : files.target);
    if (options_.max_length_ratio > 0 &&
        static_cast<double>(longer) > options_.max_length_ratio * static_cast<double>(shorter))
      return flag(pair, "length ratio", files.source);
  }

  static void flag(PairWork& pair, const char* problem, const std::string& file) {
    pair.problem = problem;
    pair.problem_file = file;
  }

  static void note_problem(SplitReport& report, const PairWork& pair, SplitRole role) {
    auto& counts = role == SplitRole::kTraining ? report.dropped : report.flagged;
    if (counts[pair.problem]++ < static_cast<int64_t>(kExamplesPerReason))
      report.examples.push_back(str_cat(pair.problem_file, ":", pair.line, ": ", pair.problem));
  }

  static Error count_mismatch(LineReader& source, LineReader& target) {
    std::string line;
    while (source.next(line)) {}
    while (target.next(line)) {}
    return Error(str_cat("parallel files differ in length: '", source.path(), "' has ", source.line_number(),
                         " lines, '", target.path(), "' has ", target.line_number()));
  }

  const PrepareOptions& options_;
  const Tokenizer& tokenizer_;
};

void count_pieces(const std::vector<std::string>& pieces, TokenCounts& counts) {
  for (const auto& piece : pieces) ++counts[piece];
}

// The tokenizer's model file travels with the data, so the folder is complete on its own (a copy
// of the folder's own tokenizer, when it is re-prepared with it, replaces it with itself).
std::string copy_tokenizer_model(const std::string& spec, const StagedFolder& output) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  const std::string kind = spec.substr(0, colon);
  const std::string name = "tokenizer." + kind;
  std::filesystem::copy_file(spec.substr(colon + 1), output.path(name), std::filesystem::copy_options::overwrite_existing);
  return kind + ":" + name;
}

}  // namespace

PrepareReport prepare_corpus(const PrepareOptions& options) {
  MIXSEQ_CHECK(!options.output_dir.empty(), "prepare: no output folder given");
  MIXSEQ_CHECK(!options.train_prefix.empty() || !options.vocabulary.empty(),
               "prepare: without a training split there is nothing to build a vocabulary from; give --train or "
               "--vocabulary");
  MIXSEQ_CHECK(options.target_lang.empty() || !options.source_lang.empty(),
               "prepare: a parallel corpus needs --source-lang as well as --target-lang");
  MIXSEQ_CHECK(options.target_lang.empty() || options.target_lang != options.source_lang,
               "prepare: --source-lang and --target-lang are both '", options.source_lang,
               "': the two sides of a parallel corpus are two files (train.de, train.en); for one language's text "
               "(a language model's) give --target-lang \"\"");
  MIXSEQ_CHECK(options.max_length >= 0, "prepare: max_length must be >= 0 (0 = no limit), got ", options.max_length);
  MIXSEQ_CHECK(std::isfinite(options.max_length_ratio) && options.max_length_ratio >= 0,
               "prepare: max_length_ratio must be a finite number >= 0 (0 = off), got ", options.max_length_ratio);
  const bool parallel = !options.target_lang.empty();
  std::vector<SplitFiles> splits;
  for (const auto& [name, prefix] : {std::pair{"train", &options.train_prefix}, std::pair{"valid", &options.valid_prefix},
                                     std::pair{"test", &options.test_prefix}}) {
    if (prefix->empty()) continue;
    splits.push_back({name, split_path(*prefix, options.source_lang),
                      parallel ? split_path(*prefix, options.target_lang) : "",
                      std::string(name) == "train" ? SplitRole::kTraining : SplitRole::kEvaluation});
  }
  // What is written: nothing may replace a file read (a corpus called vocab.txt, -o onto the
  // corpus's folder with a split named as an output), and all of it or nothing (a bad validation
  // line after the training split was written left a new vocabulary beside an old manifest).
  const auto lang_suffix = [&](const std::string& lang) { return lang.empty() ? std::string() : "." + lang; };
  // A split's files in the folder: its sides' ids, and the raw target lines of validation and test
  // splits (the references BLEU is computed against); "" where there is none.
  struct SplitOutputs {
    std::string source, target, references;
  };
  const auto outputs_of = [&](const SplitFiles& split) {
    SplitOutputs names{split.name + lang_suffix(options.source_lang) + ".bin", "", ""};
    if (parallel) names.target = split.name + lang_suffix(options.target_lang) + ".bin";
    if (parallel && split.role == SplitRole::kEvaluation) names.references = split.name + lang_suffix(options.target_lang) + ".ref";
    return names;
  };
  InputFiles inputs;
  std::vector<std::string> outputs = {"vocab.txt", "dataset.json"};
  for (const auto& split : splits) {
    inputs.add({str_cat("the ", split.name, " split"), split.source});
    if (parallel) inputs.add({str_cat("the ", split.name, " split"), split.target});
    const SplitOutputs names = outputs_of(split);
    for (const auto* name : {&names.source, &names.target, &names.references})
      if (!name->empty()) outputs.push_back(*name);
  }
  inputs.refuse_in_folder(options.output_dir, outputs);
  StagedFolder output(options.output_dir);
  const auto tokenizer = load_tokenizer(options.tokenizer);
  const SplitPreparer preparer(options, *tokenizer);

  const Vocabulary vocabulary = [&] {
    if (!options.vocabulary.empty()) return Vocabulary::load(options.vocabulary);
    log_info("prepare: counting pieces in the training split for the vocabulary");
    TokenCounts counts;
    preparer.run(splits.front(), [&](const PairWork& pair, SplitReport&) {
      count_pieces(pair.source_pieces, counts);
      count_pieces(pair.target_pieces, counts);
    });
    return Vocabulary::build(counts, options.vocabulary_options);
  }();
  vocabulary.save(output.path("vocab.txt"));
  const uint64_t fingerprint = vocabulary_fingerprint(vocabulary);

  PrepareReport report;
  report.vocabulary_size = vocabulary.size();
  nlohmann::json manifest_splits = nlohmann::json::object();
  for (const auto& split : splits) {
    const SplitOutputs names = outputs_of(split);
    TokenDatasetWriter source_out(output.path(names.source), vocabulary.size(), fingerprint);
    std::optional<TokenDatasetWriter> target_out;
    if (!names.target.empty()) target_out.emplace(output.path(names.target), vocabulary.size(), fingerprint);
    std::optional<OutputFile> references;
    if (!names.references.empty()) references.emplace(output.path(names.references));
    std::vector<int64_t> ids;
    const auto write_side = [&](const std::vector<std::string>& pieces, TokenDatasetWriter& out, int64_t& tokens,
                                SplitReport& split_report) {
      ids = vocabulary.encode(pieces);
      split_report.unknown_tokens += std::count(ids.begin(), ids.end(), kUnkId);
      tokens += static_cast<int64_t>(ids.size());
      out.add(ids);
    };
    auto split_report = preparer.run(split, [&](const PairWork& pair, SplitReport& r) {
      write_side(pair.source_pieces, source_out, r.source_tokens, r);
      if (target_out) write_side(pair.target_pieces, *target_out, r.target_tokens, r);
      if (references) references->stream() << pair.target << '\n';
    });
    // An empty split measures nothing: training reported "loss 0 | ppl 1 (best)" on an empty
    // validation split and kept its checkpoint by it.
    MIXSEQ_CHECK(split_report.lines > 0, "prepare: the ", split.name, " split is empty: '", split.source, "'",
                 parallel ? str_cat(" and '", split.target, "' hold") : std::string(" holds"), " no lines");
    const uint64_t source_checksum = source_out.finish();
    const uint64_t target_checksum = target_out ? target_out->finish() : 0;
    if (references) references->commit();
    nlohmann::json entry = {{"source", names.source},
                            {"source_checksum", checksum_hex(source_checksum)},
                            {"lines", split_report.lines},
                            {"kept", split_report.kept},
                            {"source_tokens", split_report.source_tokens},
                            {"unknown_tokens", split_report.unknown_tokens},
                            {"dropped", split_report.dropped},
                            {"flagged", split_report.flagged}};
    if (references) entry["references"] = names.references;
    if (parallel) {
      entry["target"] = names.target;
      entry["target_checksum"] = checksum_hex(target_checksum);
      entry["target_tokens"] = split_report.target_tokens;
    }
    manifest_splits[split.name] = entry;
    report.splits.push_back(std::move(split_report));
  }

  const nlohmann::json manifest = {{"format", "mixseq-prepared-data"},
                                   {"version", kDatasetManifestVersion},
                                   {"source_lang", options.source_lang},
                                   {"target_lang", options.target_lang},
                                   {"tokenizer", copy_tokenizer_model(options.tokenizer, output)},
                                   {"vocabulary", "vocab.txt"},
                                   {"splits", manifest_splits}};
  OutputFile manifest_file(output.path("dataset.json"));
  manifest_file.stream() << manifest.dump(2) << '\n';
  manifest_file.commit();
  output.commit("dataset.json");
  return report;
}

std::string format_prepare_report(const PrepareReport& report) {
  std::ostringstream out;
  out << "vocabulary: " << report.vocabulary_size << " entries\n";
  for (const auto& split : report.splits) {
    out << split.name << ": read " << split.lines << ", kept " << split.kept << ", " << split.source_tokens
        << " source + " << split.target_tokens << " target pieces, " << split.unknown_tokens << " <unk>";
    for (const auto& [reason, count] : split.dropped) out << "; dropped " << count << " (" << reason << ")";
    for (const auto& [reason, count] : split.flagged) out << "; kept " << count << " despite: " << reason;
    out << '\n';
    for (const auto& example : split.examples) out << "  e.g. " << example << '\n';
  }
  return out.str();
}

}  // namespace mixseq
