#include "mixseq/data/classification_data.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "mixseq/data/prepared_data.h"
#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/file_bytes.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/utf8.h"

namespace fs = std::filesystem;

namespace mixseq {
namespace {

constexpr const char* kManifestName = "dataset.json";
constexpr const char* kVocabularyName = "vocab.txt";
constexpr const char* kLabelsName = "labels.txt";

// One line of a labelled file: the text and the label, split at the last tab.
struct LabelledLine {
  std::string text;
  std::string label;
};

// The examples of `path`, header skipped; errors name the file and line.
std::vector<LabelledLine> read_labelled_file(const std::string& path) {
  LineReader reader(path);
  std::vector<LabelledLine> lines;
  std::string line;
  while (reader.next(line)) {
    const size_t tab = line.rfind('\t');
    if (reader.line_number() == 1 && tab != std::string::npos && line.substr(tab + 1) == "label") continue;
    if (strip_whitespace(line).empty()) reader.fail("empty line: every line is `text<TAB>label`");
    if (tab == std::string::npos) reader.fail("no tab: every line is `text<TAB>label`");
    LabelledLine parsed{line.substr(0, tab), std::string(strip_whitespace(std::string_view(line).substr(tab + 1)))};
    if (strip_whitespace(parsed.text).empty()) reader.fail("empty text before the label '", parsed.label, "'");
    if (parsed.label.empty()) reader.fail("empty label after the text");
    lines.push_back(std::move(parsed));
  }
  MIXSEQ_CHECK(!lines.empty(), "'", path, "' holds no examples");
  return lines;
}

// A tokenizer spec with its file named relative to the dataset folder ("spm:tokenizer.spm") -> one
// that load_tokenizer opens.
std::string in_folder(const std::string& spec, const std::string& dir) {
  const auto colon = spec.find(':');
  return colon == std::string::npos ? spec : spec.substr(0, colon + 1) + dir + "/" + spec.substr(colon + 1);
}

// The lines of `text`, each without its "\n" (a last line may lack one).
std::vector<std::string_view> text_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return lines;
}

}  // namespace

std::vector<std::string> parse_labels(std::string_view text, const std::string& where) {
  std::vector<std::string> labels;
  std::set<std::string> seen;
  int64_t line = 0;
  for (const auto& label : text_lines(text)) {
    ++line;
    MIXSEQ_CHECK(!label.empty(), where, ":", line, ": empty label");
    MIXSEQ_CHECK(seen.insert(std::string(label)).second, where, ":", line, ": label '", label, "' listed twice");
    labels.emplace_back(label);
  }
  MIXSEQ_CHECK(labels.size() >= 2, where, ": a classifier needs at least 2 labels, found ", labels.size());
  return labels;
}

std::string labels_text(const std::vector<std::string>& labels) {
  std::string text;
  for (const auto& label : labels) text += label + "\n";
  return text;
}

std::vector<int64_t> classification_ids(std::string_view text, const Tokenizer& tokenizer,
                                        const Vocabulary& vocabulary, int64_t max_length, int64_t* unknown_tokens) {
  auto pieces = tokenizer.encode(text);
  if (max_length > 0 && static_cast<int64_t>(pieces.size()) > max_length) pieces.resize(static_cast<size_t>(max_length));
  auto ids = vocabulary.encode(pieces);
  if (unknown_tokens != nullptr)
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == kUnkId && pieces[i] != "<unk>") ++*unknown_tokens;
  return ids;
}

ClassificationBatch make_classification_batch(const std::vector<LabelledExample>& examples,
                                              const std::vector<int64_t>& indices) {
  int64_t width = 0;
  for (const int64_t i : indices) width = std::max<int64_t>(width, static_cast<int64_t>(examples[i].ids.size()) + 2);
  const int64_t B = static_cast<int64_t>(indices.size());
  ClassificationBatch batch;
  batch.tokens = at::full({B, width}, kPadId, at::kLong);
  batch.lengths = at::empty({B}, at::kLong);
  batch.labels = at::empty({B}, at::kLong);
  auto tokens = batch.tokens.accessor<int64_t, 2>();
  auto lengths = batch.lengths.accessor<int64_t, 1>();
  auto labels = batch.labels.accessor<int64_t, 1>();
  for (int64_t b = 0; b < B; ++b) {
    const LabelledExample& example = examples[static_cast<size_t>(indices[b])];
    const int64_t length = static_cast<int64_t>(example.ids.size()) + 2;
    tokens[b][0] = tokens[b][length - 1] = kEosId;
    for (size_t t = 0; t < example.ids.size(); ++t) tokens[b][static_cast<int64_t>(t) + 1] = example.ids[t];
    lengths[b] = length;
    labels[b] = example.label;
    batch.tokens_read += length;
  }
  return batch;
}

std::map<std::string, ClassificationSplitReport> prepare_classification_data(
    const ClassificationPrepareOptions& options) {
  MIXSEQ_CHECK(options.files.count("train") != 0, "prepare --task classify: --train is required (the labels and, "
                                                  "without a pretrained model, the vocabulary come from it)");
  MIXSEQ_CHECK(!options.out_dir.empty(), "prepare --task classify: no output folder");
  MIXSEQ_CHECK(options.max_length >= 0, "prepare --task classify: max_length must be 0 or more");
  std::map<std::string, std::vector<LabelledLine>> splits;
  for (const auto& [split, path] : options.files) splits[split] = read_labelled_file(path);

  // Nothing written may replace a file read (-o onto the folder of train.tsv), and all of it or
  // nothing (util/output_file.h, StagedFolder).
  InputFiles inputs;
  std::vector<std::string> outputs = {kManifestName, kVocabularyName, kLabelsName};
  for (const auto& [split, path] : options.files) {
    inputs.add({"--" + split, path});
    outputs.push_back(split + ".tsv");
  }
  inputs.refuse_in_folder(options.out_dir, outputs);
  StagedFolder output(options.out_dir);
  std::string tokenizer_spec = "none";
  std::unique_ptr<Tokenizer> tokenizer;
  const auto take_vocabulary = [&]() -> Vocabulary {
    if (options.pretrained != nullptr) {
      const PretrainedText& pretrained = *options.pretrained;
      if (pretrained.tokenizer_kind != "none") {
        write_file_bytes(output.path("tokenizer." + pretrained.tokenizer_kind), pretrained.tokenizer_model);
        tokenizer_spec = pretrained.tokenizer_kind + ":tokenizer." + pretrained.tokenizer_kind;
      }
      tokenizer = load_tokenizer(in_folder(tokenizer_spec, output.staging_folder()));
      write_file_bytes(output.path(kVocabularyName), pretrained.vocabulary_text);
      return Vocabulary::load(output.path(kVocabularyName));
    }
    if (options.tokenizer != "none") {
      const auto colon = options.tokenizer.find(':');
      MIXSEQ_CHECK(colon != std::string::npos, "prepare --task classify: --tokenizer must be bpe:<codes>, spm:<model> "
                                               "or none, not '", options.tokenizer, "'");
      const std::string kind = options.tokenizer.substr(0, colon);
      write_file_bytes(output.path("tokenizer." + kind), read_file_bytes(options.tokenizer.substr(colon + 1)));
      tokenizer_spec = kind + ":tokenizer." + kind;
    }
    tokenizer = load_tokenizer(in_folder(tokenizer_spec, output.staging_folder()));
    TokenCounts counts;
    for (const auto& line : splits.at("train"))
      for (const auto& piece : tokenizer->encode(line.text)) ++counts[piece];
    auto built = Vocabulary::build(counts, options.vocabulary_options);
    built.save(output.path(kVocabularyName));
    return built;
  };
  const Vocabulary vocabulary = take_vocabulary();

  std::set<std::string> label_set;
  for (const auto& line : splits.at("train")) label_set.insert(line.label);
  const std::vector<std::string> labels(label_set.begin(), label_set.end());
  MIXSEQ_CHECK(labels.size() >= 2, "'", options.files.at("train"), "' has only one label ('", labels.front(),
               "'): a classifier needs at least 2");
  std::map<std::string, int64_t> label_ids;
  for (size_t i = 0; i < labels.size(); ++i) label_ids[labels[i]] = static_cast<int64_t>(i);
  write_file_bytes(output.path(kLabelsName), labels_text(labels));

  std::map<std::string, ClassificationSplitReport> reports;
  nlohmann::json manifest = {{"kind", "classification"},
                             {"version", kClassificationDatasetVersion},
                             {"tokenizer", tokenizer_spec},
                             {"max_length", options.max_length},
                             {"vocabulary_fingerprint", checksum_hex(vocabulary_fingerprint(vocabulary))},
                             {"splits", nlohmann::json::object()}};
  for (const auto& [split, lines] : splits) {
    ClassificationSplitReport& report = reports[split];
    std::ostringstream text;
    int64_t line_number = 0;
    for (const auto& line : lines) {
      ++line_number;
      const auto label = label_ids.find(line.label);
      if (label == label_ids.end())
        throw Error(str_cat(options.files.at(split), ": label '", line.label, "' of example ", line_number,
                            " does not occur in the training file '", options.files.at("train"), "'"));
      if (options.max_length > 0 && static_cast<int64_t>(tokenizer->encode(line.text).size()) > options.max_length)
        ++report.truncated;
      const auto ids = classification_ids(line.text, *tokenizer, vocabulary, options.max_length, &report.unknown_tokens);
      text << label->second << '\t';
      for (size_t i = 0; i < ids.size(); ++i) text << (i ? " " : "") << ids[i];
      text << '\n';
      ++report.examples;
      report.tokens += static_cast<int64_t>(ids.size());
      ++report.label_counts[line.label];
    }
    const std::string bytes = text.str();
    write_file_bytes(output.path(split + ".tsv"), bytes);
    manifest["splits"][split] = {{"source", fs::absolute(options.files.at(split)).string()},
                                 {"examples", report.examples},
                                 {"tokens", report.tokens},
                                 {"unknown_tokens", report.unknown_tokens},
                                 {"truncated", report.truncated},
                                 {"checksum", checksum_hex(checksum64(bytes.data(), bytes.size()))}};
  }
  write_file_bytes(output.path(kManifestName), manifest.dump(2) + "\n");
  output.commit(kManifestName);
  return reports;
}

namespace {
// dir's manifest path, checked to exist.
std::string manifest_of(const std::string& dir) {
  const std::string manifest_path = dir + "/" + kManifestName;
  MIXSEQ_CHECK(fs::exists(manifest_path), "'", dir, "' has no ", kManifestName,
               ": give a folder written by `mixseq prepare --task classify`");
  return manifest_path;
}
}  // namespace

ClassificationData::ClassificationData(const std::string& dir)
    : dir_(dir), vocabulary_((manifest_of(dir), Vocabulary::load(dir + "/" + kVocabularyName))) {
  const std::string manifest_path = manifest_of(dir);
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(read_file_bytes(manifest_path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(str_cat(manifest_path, ": not valid JSON (", e.what(), ")"));
  }
  MIXSEQ_CHECK(manifest.value("kind", "") == "classification", manifest_path,
               ": not a classification dataset (kind '", manifest.value("kind", "text"),
               "'); a classifier trains on a folder written by `mixseq prepare --task classify`");
  MIXSEQ_CHECK(manifest.value("version", 0) == kClassificationDatasetVersion, manifest_path, ": format version ",
               manifest.value("version", 0), ", this mixseq reads ", kClassificationDatasetVersion);
  MIXSEQ_CHECK(manifest.value("vocabulary_fingerprint", "") == checksum_hex(vocabulary_fingerprint(vocabulary_)),
               dir, "/", kVocabularyName, " is not the vocabulary the dataset was written with");
  const std::string labels_path = dir + "/" + kLabelsName;
  labels_ = parse_labels(read_file_bytes(labels_path), labels_path);
  tokenizer_ = in_folder(manifest.value("tokenizer", "none"), dir);
  max_length_ = manifest.value("max_length", int64_t{0});
  MIXSEQ_CHECK(manifest.contains("splits") && manifest["splits"].is_object(), manifest_path, ": no splits");
  for (const auto& [name, info] : manifest["splits"].items()) {
    const std::string path = dir + "/" + name + ".tsv";
    const std::string bytes = read_file_bytes(path);
    MIXSEQ_CHECK(checksum_hex(checksum64(bytes.data(), bytes.size())) == info.value("checksum", ""), path,
                 " does not have the checksum ", manifest_path, " recorded: the file changed since `mixseq prepare` "
                 "wrote it");
    auto& examples = splits_[name];
    int64_t line_number = 0;
    for (const auto& line : text_lines(bytes)) {
      ++line_number;
      const size_t tab = line.find('\t');
      MIXSEQ_CHECK(tab != std::string_view::npos, path, ":", line_number, ": no tab");
      LabelledExample example;
      const auto parse = [&](std::string_view field, int64_t& value, int64_t bound, const char* what) {
        const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
        MIXSEQ_CHECK(error == std::errc() && end == field.data() + field.size() && value >= 0 && value < bound, path,
                     ":", line_number, ": ", what, " '", field, "' is not below ", bound);
      };
      parse(line.substr(0, tab), example.label, static_cast<int64_t>(labels_.size()), "label id");
      for (const auto& field : split_on_space(line.substr(tab + 1))) {
        if (field.empty()) continue;
        int64_t id = 0;
        parse(field, id, vocabulary_.size(), "token id");
        example.ids.push_back(id);
      }
      examples.push_back(std::move(example));
    }
    MIXSEQ_CHECK(static_cast<int64_t>(examples.size()) == info.value("examples", int64_t{-1}), path, " holds ",
                 examples.size(), " examples, ", manifest_path, " says ", info.value("examples", int64_t{-1}));
  }
  MIXSEQ_CHECK(has_split("train") || has_split("valid"), manifest_path, ": no train or valid split");
}

const std::vector<LabelledExample>& ClassificationData::split(const std::string& name) const {
  const auto it = splits_.find(name);
  MIXSEQ_CHECK(it != splits_.end(), "'", dir_, "' has no ", name, " split");
  return it->second;
}

bool is_classification_dataset(const std::string& dir) {
  const std::string manifest_path = dir + "/" + kManifestName;
  if (!fs::exists(manifest_path)) return false;
  try {
    return nlohmann::json::parse(read_file_bytes(manifest_path)).value("kind", "") == "classification";
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace mixseq
