#include "mixseq/data/prepared_data.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <mutex>

#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"

namespace mixseq {

uint64_t vocabulary_fingerprint(const Vocabulary& vocabulary) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a, 64-bit
  const auto mix = [&](unsigned char byte) { hash = (hash ^ byte) * 0x100000001b3ull; };
  for (int64_t id = 0; id < vocabulary.size(); ++id) {
    for (const char c : vocabulary.token(id)) mix(static_cast<unsigned char>(c));
    mix('\n');
  }
  return hash;
}

namespace {

nlohmann::json read_manifest(const std::string& path) {
  std::ifstream in(path);
  MIXSEQ_CHECK(in.is_open(), "cannot open '", path, "': is this a folder written by `mixseq prepare`?");
  try {
    const auto manifest = nlohmann::json::parse(in);
    MIXSEQ_CHECK(manifest.is_object(), "'", path, "' is not a mixseq dataset manifest");
    // A speech or classification folder (their manifests say their kind) given to a text task.
    const std::string kind = manifest.value("kind", "");
    MIXSEQ_CHECK(kind.empty(), "'", path, "' is a ", kind, " dataset, written by `mixseq prepare --task ",
                 kind == "classification" ? "classify" : kind,
                 "`; translation and language models train on text prepared by `mixseq prepare` (--task text)");
    MIXSEQ_CHECK(manifest.value("format", "") == "mixseq-prepared-data", "'", path,
                 "' is not a mixseq dataset manifest");
    MIXSEQ_CHECK(manifest.value("version", 0) == kDatasetManifestVersion, "'", path, "' has version ",
                 manifest.value("version", 0), ", this mixseq reads version ", kDatasetManifestVersion,
                 "; run `mixseq prepare` again");
    return manifest;
  } catch (const nlohmann::json::exception& e) {
    throw Error(str_cat("'", path, "' is not valid JSON: ", e.what()));
  }
}

// "kind:file" with a file relative to the data folder -> "kind:<dir>/file".
std::string resolve_tokenizer(const std::string& spec, const std::string& dir) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  return spec.substr(0, colon + 1) + dir + "/" + spec.substr(colon + 1);
}

// A flipped byte in a token is still a valid id: only the checksum `mixseq prepare` recorded
// tells. Manifests written before checksums existed still open, with one warning per process.
void verify_checksum(const TokenDataset& dataset, const nlohmann::json& entry, const std::string& key,
                     const std::string& manifest_path) {
  if (!entry.contains(key)) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      log_info("warning: '", manifest_path, "' records no checksums (written by an older mixseq), so corrupt "
               "datasets cannot be detected; run `mixseq prepare` again to add them");
    });
    return;
  }
  const auto recorded = entry.at(key).get<std::string>();
  const auto actual = checksum_hex(dataset.checksum());
  MIXSEQ_CHECK(actual == recorded, "'", dataset.path(), "' is corrupt: its checksum is ", actual, " but '",
               manifest_path, "' recorded ", recorded, " when `mixseq prepare` wrote it; run `mixseq prepare` again");
}

}  // namespace

PreparedData::PreparedData(const std::string& dir)
    : dir_(dir), vocabulary_(Vocabulary::load(dir + "/vocab.txt")) {
  const std::string manifest_path = dir + "/dataset.json";
  const auto manifest = read_manifest(manifest_path);
  try {
    tokenizer_ = resolve_tokenizer(manifest.at("tokenizer").get<std::string>(), dir);
    source_lang_ = manifest.at("source_lang").get<std::string>();
    target_lang_ = manifest.at("target_lang").get<std::string>();
    const uint64_t fingerprint = vocabulary_fingerprint(vocabulary_);
    const auto open = [&](const nlohmann::json& entry, const std::string& side) {
      auto dataset = std::make_unique<TokenDataset>(dir + "/" + entry.at(side).get<std::string>());
      MIXSEQ_CHECK(dataset->vocab_fingerprint() == fingerprint, "'", dataset->path(),
                   "' was prepared with another vocabulary than '", dir,
                   "/vocab.txt'; run `mixseq prepare` again");
      verify_checksum(*dataset, entry, side + "_checksum", manifest_path);
      return dataset;
    };
    for (const auto& [name, entry] : manifest.at("splits").items()) {
      Split split;
      split.source = open(entry, "source");
      if (!monolingual()) {
        split.target = open(entry, "target");
        MIXSEQ_CHECK(split.source->size() == split.target->size(), "'", split.source->path(), "' has ",
                     split.source->size(), " sentences but '", split.target->path(), "' has ",
                     split.target->size());
      }
      if (entry.contains("references")) split.references = dir + "/" + entry.at("references").get<std::string>();
      splits_.emplace(name, std::move(split));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(str_cat("'", manifest_path, "' lacks a field or has one of the wrong type: ", e.what()));
  }
}

const PreparedData::Split& PreparedData::split(const std::string& name) const {
  const auto it = splits_.find(name);
  MIXSEQ_CHECK(it != splits_.end(), "'", dir_, "' has no '", name, "' split");
  return it->second;
}

void PreparedData::note_unpadded_vocabulary() const {
  const int64_t size = vocabulary_.size();
  if (size % 8 == 0) return;
  log_info("train: the vocabulary of '", dir_, "' has ", size,
           " entries, not a multiple of 8: the output layer's products may run slower (an LSTM language model over ",
           "35,351 words trained 1.4x slower in bf16 than over 35,352); prepare pads to a multiple of 8 unless ",
           "--vocab-pad-to-multiple says otherwise");
}

const TokenDataset& PreparedData::source(const std::string& name) const { return *split(name).source; }

std::string PreparedData::references_path(const std::string& name) const { return split(name).references; }

const TokenDataset& PreparedData::target(const std::string& name) const {
  MIXSEQ_CHECK(!monolingual(), "'", dir_, "' holds a monolingual corpus: it has no target side");
  return *split(name).target;
}

}  // namespace mixseq
