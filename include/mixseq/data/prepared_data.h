// PreparedData: the folder `mixseq prepare` wrote, opened for training and evaluation.
// Opening reads dataset.json and the vocabulary, maps each split's token datasets and checks
// that they were made with this vocabulary and still have the checksum dataset.json recorded
// (reading each file once), so stale, mixed-up or corrupt files fail here, by name. A manifest
// from before checksums were recorded opens with a warning.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "mixseq/data/token_dataset.h"
#include "mixseq/text/vocabulary.h"

namespace mixseq {

constexpr int64_t kDatasetManifestVersion = 1;

// Ties token datasets to the vocabulary whose ids they hold (FNV-1a over the tokens in order).
uint64_t vocabulary_fingerprint(const Vocabulary& vocabulary);

class PreparedData {
 public:
  explicit PreparedData(const std::string& dir);

  const Vocabulary& vocabulary() const { return vocabulary_; }
  const std::string& tokenizer() const { return tokenizer_; }  // spec for load_tokenizer, e.g. "bpe:codes"
  const std::string& source_lang() const { return source_lang_; }
  const std::string& target_lang() const { return target_lang_; }  // empty for a monolingual corpus
  bool monolingual() const { return target_lang_.empty(); }
  // Logs one line when the vocabulary's size is not a multiple of 8, whose output-layer products
  // run slower (docs/benchmarks.md, "An odd vocabulary"); the training tasks call it at start.
  void note_unpadded_vocabulary() const;

  bool has_split(const std::string& split) const { return splits_.count(split) != 0; }
  const TokenDataset& source(const std::string& split) const;
  const TokenDataset& target(const std::string& split) const;  // throws for a monolingual corpus
  // The raw target lines of a validation or test split (empty path for other splits).
  std::string references_path(const std::string& split) const;

 private:
  struct Split {
    std::unique_ptr<TokenDataset> source, target;
    std::string references;  // path, or empty
  };
  const Split& split(const std::string& name) const;

  std::string dir_;
  Vocabulary vocabulary_;
  std::string tokenizer_, source_lang_, target_lang_;
  std::map<std::string, Split> splits_;
};

}  // namespace mixseq
