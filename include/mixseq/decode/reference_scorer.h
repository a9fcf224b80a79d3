// ReferenceScorer: forced decoding. For each (source, target) pair of raw text it gives
// log P(target | source) under the model: both sides are segmented with the model's tokenizer
// and mapped to ids (a piece not in the vocabulary is <unk>), the decoder reads <s> y1 .. ym
// (teacher forcing, as in training) and the scores of y1 .. ym </s> are summed, in natural log.
// This is marian-scorer's and fairseq-generate --score-reference's job: rescoring n-best lists,
// filtering corpora, checking a model against references.
//
// It agrees with the search: a hypothesis that beam search found with length_penalty 0 and
// coverage_penalty 0 has score = log_prob = what this returns for its text (tests/e2e/score.sh).
// Pairs are batched by length like translation. Not thread-safe (it runs the shared model);
// the model, vocabulary and tokenizer must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/models/seq2seq_model.h"
#include "mixseq/text/tokenizer.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct ReferenceScore {
  double log_prob = 0;  // log P(target | source), natural log, the </s> step included
  int64_t tokens = 0;   // target tokens scored: pieces + 1 for </s>
};

struct ReferenceScoreOptions {
  int64_t max_tokens = 8192;          // per batch: pairs x (longest source + longest target), padding included
  int64_t max_source_tokens = 1024;   // a longer source sentence (in pieces) is an error; 0 = no limit
  int64_t max_target_tokens = 1024;   // a longer target sentence is an error; 0 = no limit
  std::string source_name = "source"; // how errors name the sources ("test.en"), with the line number
  std::string target_name = "target"; // and the targets
};

class ReferenceScorer {
 public:
  ReferenceScorer(Seq2SeqModelImpl& model, const Vocabulary& vocabulary, const Tokenizer& tokenizer,
                  torch::Device device, Precision precision);

  // One score per pair, in input order; sources and targets must have the same size. A sentence
  // over its limit throws mixseq::Error naming its file and line before any pair is scored: the
  // decoder's attention costs grow with source x target length (one 40,000-word pair ran for
  // minutes), as translate's and serve's --max-source-tokens guard against.
  std::vector<ReferenceScore> score(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                                    const ReferenceScoreOptions& options = {});

 private:
  Seq2SeqModelImpl& model_;
  const Vocabulary& vocabulary_;
  const Tokenizer& tokenizer_;
  torch::Device device_;
  Precision precision_;
};

}  // namespace mixseq
