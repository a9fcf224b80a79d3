// Training a SentencePiece model (Kudo & Richardson 2018) through Debian's libsentencepiece,
// which mixseq opens as a separate module (src/text/sentencepiece_module.h says why).
// mixseq reads the input files itself and hands the sentences to the trainer one by one, so
// paths may hold spaces or commas, and malformed UTF-8 is reported as "<path>:<line>". The
// options go to SentencePieceTrainer as a key -> value map, never as a flag string, so no
// value needs quoting. Writes <model_prefix>.model (for SentencePieceTokenizer) and
// <model_prefix>.vocab (one "piece<TAB>score" per line, for reading), both as OutputFile writes:
// replaced whole or not at all, write errors (a full disk) reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mixseq {

struct SentencePieceTrainOptions {
  std::vector<std::string> input_paths;  // UTF-8 text files, one sentence per line; all are read
  std::string model_prefix;              // writes <model_prefix>.model and <model_prefix>.vocab
  int64_t vocab_size = 8000;             // pieces in the model, <unk> <s> </s> included
  std::string model_type = "unigram";    // unigram | bpe | char | word
  double character_coverage = 1.0;       // share of characters the model spells, the rarest fall
                                         // to <unk>; SentencePiece advises 0.9995 for Chinese/Japanese
  int64_t input_sentence_size = 0;       // sentences sampled for training; 0 = all of them
  bool shuffle_input_sentence = true;    // with input_sentence_size: sample at random (true) or take the first
  uint32_t seed = 1;                     // seeds the sampling, so a run can be repeated
  int num_threads = 0;                   // trainer threads; 0 = one per core
  std::vector<std::string> user_defined_symbols;  // pieces always kept whole, e.g. "<sep>"; no commas
  bool log_progress = false;             // SentencePiece's training log on stderr; off: warnings only
};

// Trains and writes the model; throws mixseq::Error for bad options, unreadable input
// ("<path>:<line>: ..."), or a failure inside SentencePiece (e.g. vocab_size larger than the
// input allows, with the largest size that fits). Returns the number of sentences read.
int64_t train_sentencepiece(const SentencePieceTrainOptions& options);

}  // namespace mixseq
