// Labelled sentences: what `mixseq prepare --task classify` makes of TSV files of
// `text<TAB>label` lines, and their reading for training, validation and `mixseq classify`.
//
// A file has one example per line: the text, a tab, the label (any string without a tab; the
// last tab of the line separates them, so the text may hold tabs). An optional first line whose
// label field is "label" (GLUE's `sentence<TAB>label`) is a header and skipped. A line without a
// tab, with empty text or an empty label, an empty line, malformed UTF-8, or (in validation and
// test files) a label the training file does not have, is an error naming the file and line.
//
// The text is segmented by a tokenizer and mapped to ids with a vocabulary: either those of a
// pretrained model (a language model's checkpoint, whose encoder the classifier reuses: the
// command reads them from it and passes them here) or a vocabulary built from the training
// file. Pieces outside the vocabulary become <unk> and are counted.
//
// The folder holds dataset.json ("kind": "classification", the tokenizer, each split's counts
// and the checksum of its file), vocab.txt, labels.txt (the labels in id order, one per line:
// sorted as strings), the tokenizer's model when there is one (tokenizer.bpe or tokenizer.spm),
// and per split <split>.tsv: `label id<TAB>token ids separated by spaces` per example.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mixseq/text/tokenizer.h"
#include "mixseq/text/vocabulary.h"

namespace mixseq {

inline constexpr int64_t kClassificationDatasetVersion = 1;

// The vocabulary and tokenizer a pretrained model brings (models/checkpoint.h's contents).
struct PretrainedText {
  std::string vocabulary_text;  // vocab.txt, byte for byte
  std::string tokenizer_kind;   // "bpe", "spm" or "none"
  std::string tokenizer_model;  // the codes or SentencePiece model, byte for byte; "" for none
};

struct ClassificationPrepareOptions {
  std::map<std::string, std::string> files;  // split name ("train", "valid", "test") -> TSV file; train is required
  std::string out_dir;                       // the dataset folder (created; its files replaced)
  std::string tokenizer = "none";            // with a built vocabulary: "bpe:<codes>", "spm:<model>" or "none"
  VocabularyOptions vocabulary_options;      // with a built vocabulary
  const PretrainedText* pretrained = nullptr;  // the pretrained model's vocabulary and tokenizer; null: build one
  int64_t max_length = 0;                    // pieces kept of a longer text (its first ones); 0 = keep all
};

struct ClassificationSplitReport {
  int64_t examples = 0;                      // written
  int64_t tokens = 0;                        // pieces written
  int64_t unknown_tokens = 0;                // pieces outside the vocabulary, written as <unk>
  int64_t truncated = 0;                     // texts cut to max_length
  std::map<std::string, int64_t> label_counts;  // label -> examples
};

// Writes the dataset; returns what each split holds. Throws naming the file and line (see above).
std::map<std::string, ClassificationSplitReport> prepare_classification_data(const ClassificationPrepareOptions& options);

// The labels in id order, from the text labels.txt holds (one per line): a duplicate or empty
// label, or fewer than 2, is an error naming `where`.
std::vector<std::string> parse_labels(std::string_view text, const std::string& where);
std::string labels_text(const std::vector<std::string>& labels);

struct LabelledExample {
  std::vector<int64_t> ids;  // the text's token ids (no </s>; the classifier adds its own)
  int64_t label = 0;         // index into the labels
};

// A batch as a classifier reads it (models/sentence_classifier.h): row b is </s>, the ids of
// examples[indices[b]], </s>, then kPadId up to the longest row.
struct ClassificationBatch {
  torch::Tensor tokens;     // [B, T] int64
  torch::Tensor lengths;    // [B] int64: the row's ids with both </s>
  torch::Tensor labels;     // [B] int64
  int64_t tokens_read = 0;  // the sum of lengths
};
ClassificationBatch make_classification_batch(const std::vector<LabelledExample>& examples,
                                              const std::vector<int64_t>& indices);

// Text for a classifier outside of a prepared folder (`mixseq classify`, serve's /classify):
// one line -> token ids, as prepare maps the training text (max_length 0 = keep all pieces).
std::vector<int64_t> classification_ids(std::string_view text, const Tokenizer& tokenizer,
                                        const Vocabulary& vocabulary, int64_t max_length,
                                        int64_t* unknown_tokens = nullptr);

class ClassificationData {
 public:
  // Opens a folder prepare_classification_data wrote; throws naming the file for anything
  // missing, malformed, of another kind, or whose checksum differs from dataset.json's.
  explicit ClassificationData(const std::string& dir);

  const Vocabulary& vocabulary() const { return vocabulary_; }
  const std::vector<std::string>& labels() const { return labels_; }
  const std::string& tokenizer() const { return tokenizer_; }  // spec for load_tokenizer, e.g. "spm:<dir>/tokenizer.spm"
  int64_t max_length() const { return max_length_; }
  bool has_split(const std::string& name) const { return splits_.count(name) != 0; }
  const std::vector<LabelledExample>& split(const std::string& name) const;

 private:
  std::string dir_;
  Vocabulary vocabulary_;
  std::vector<std::string> labels_;
  std::string tokenizer_;
  int64_t max_length_ = 0;
  std::map<std::string, std::vector<LabelledExample>> splits_;
};

// True when `dir`'s dataset.json says "kind": "classification".
bool is_classification_dataset(const std::string& dir);

}  // namespace mixseq
