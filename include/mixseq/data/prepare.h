// `mixseq prepare`: raw text in, token datasets out.
//
// Reads the raw parallel files of each split (<prefix>.<lang>), checks them, segments them
// with a tokenizer (BPE codes, a SentencePiece model, or text that is already segmented),
// maps pieces to ids with one joint vocabulary (built from the training split unless given),
// and writes into output_dir:
//   vocab.txt                         the vocabulary (ids 0-3: <pad> <unk> <s> </s>)
//   <split>.<lang>.bin                a TokenDataset per split and side
//   <split>.<target_lang>.ref         validation and test splits: the raw target lines, the
//                                     references that BLEU is computed against
//   dataset.json                      what was written, from what, and what was dropped; the
//                                     checksum of each .bin, verified when it is opened
//
// Training pairs that cannot help are dropped and counted by reason: an empty side, a side
// over max_length pieces, a length ratio over max_length_ratio, characters outside Latin-1
// (optional, as NVIDIA's GNMT recipe filters WMT), malformed UTF-8 (optional; an error
// otherwise). Validation and test splits keep every line, so that translations stay aligned
// with their references: there, malformed UTF-8 is always an error and empty or long lines
// are only reported. Files with different line counts are an error naming both counts.
//
// With no target_lang the corpus is monolingual (language modelling): each split is the file
// <prefix>.<source_lang>, or <prefix> itself when source_lang is empty too, and every line is
// kept, empty ones included (they mark paragraph ends in WikiText).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mixseq/text/vocabulary.h"

namespace mixseq {

struct PrepareOptions {
  std::string source_lang = "en";  // file suffix of the source side
  std::string target_lang = "de";  // file suffix of the target side; empty = monolingual corpus
  std::string train_prefix;        // raw files <prefix>.<lang>; an empty prefix skips the split
  std::string valid_prefix;
  std::string test_prefix;
  std::string tokenizer = "none";  // "bpe:<codes>", "spm:<model>", or "none" (split on spaces)
  std::string vocabulary;          // existing vocabulary file; empty = build one from the training split
  VocabularyOptions vocabulary_options;  // when building
  std::string output_dir;
  int64_t max_length = 250;         // training: drop pairs with a side over this many pieces; 0 = no limit
  double max_length_ratio = 0;      // training: drop pairs whose longer/shorter side ratio exceeds this; 0 = off
  bool drop_non_latin1 = false;     // training: drop pairs with characters above U+00FF (GNMT recipe)
  bool drop_malformed_utf8 = false; // training: drop lines with malformed UTF-8 instead of stopping
};

struct SplitReport {
  std::string name;                         // "train", "valid" or "test"
  int64_t lines = 0;                        // pairs (or lines) read
  int64_t kept = 0;                         // pairs written
  int64_t source_tokens = 0;                // pieces written, without eos
  int64_t target_tokens = 0;
  int64_t unknown_tokens = 0;               // pieces not in the vocabulary, written as <unk>
  std::map<std::string, int64_t> dropped;   // reason -> count (training split)
  std::map<std::string, int64_t> flagged;   // reason -> count, kept anyway (validation, test)
  std::vector<std::string> examples;        // "<file>:<line>: <reason>" for the first few of each reason
};

struct PrepareReport {
  int64_t vocabulary_size = 0;
  std::vector<SplitReport> splits;
};

PrepareReport prepare_corpus(const PrepareOptions& options);

// One line per split with counts and drop reasons, for the console.
std::string format_prepare_report(const PrepareReport& report);

}  // namespace mixseq
