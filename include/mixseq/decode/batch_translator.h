// BatchTranslator: text in, text out. It segments each source line with the model's tokenizer,
// maps pieces to ids, batches sentences of similar length (up to max_tokens source tokens a
// batch), runs beam search (decode/beam_search.h) and turns the best ids back into text,
// returning results in input order. On the CPU, batches are decoded side by side on worker
// threads (TranslateOptions::workers). It owns nothing but references: the model, vocabulary
// and tokenizer must outlive it. Not thread-safe (it switches the model to eval mode and back);
// use one BatchTranslator per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/decode/beam_search.h"
#include "mixseq/models/seq2seq_model.h"
#include "mixseq/text/tokenizer.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct TranslateOptions {
  BeamSearchOptions search;
  int64_t max_tokens = 8192;  // source tokens per batch (sentences x longest source)
  // Longest source, in tokens: a longer one is an error naming its line (a 1 MB line would
  // otherwise run for minutes), or with truncate_long_sources cut to this length, as
  // CTranslate2's max_input_length does. 0 = no limit.
  int64_t max_source_tokens = 1024;
  bool truncate_long_sources = false;
  // Batches decoded side by side, each on its own thread with its share of the CPU threads
  // (util/worker_threads.h); 0 = one per thread when there are that many batches, 1 = one
  // batch at a time on all threads. CPU only: a GPU decodes one batch at a time.
  int workers = 0;
};

struct TextHypothesis {
  std::string text;   // detokenized output
  double score = 0;   // search score (log-probability with GNMT penalties)
  int64_t tokens = 0; // output tokens, without </s>
  std::vector<int64_t> alignment;  // with search.return_alignment: per output piece, the source piece
                                   // it attended most (Hypothesis::alignment); empty otherwise
  std::vector<std::string> pieces;  // the output's vocabulary pieces, without </s> (text is their decode)
};

class BatchTranslator {
 public:
  BatchTranslator(Seq2SeqModelImpl& model, const Vocabulary& vocabulary, const Tokenizer& tokenizer,
                  torch::Device device, Precision precision);

  // Raw source lines -> for each, its nbest translations (best first). Empty lines give one
  // empty translation without running the model. Errors name a line as first_line + its index
  // (a streaming caller passes the number of its buffer's first line).
  std::vector<std::vector<TextHypothesis>> translate(const std::vector<std::string>& sources,
                                                     const TranslateOptions& options, int64_t first_line = 1);

  // Sources already segmented into vocabulary pieces (a piece outside the vocabulary reads as
  // <unk>, as CTranslate2 takes token lists) -> as translate(): an empty list gives one empty
  // translation, the max_source_tokens limit applies, errors name first_line + the index.
  std::vector<std::vector<TextHypothesis>> translate_pieces(const std::vector<std::vector<std::string>>& sources,
                                                            const TranslateOptions& options, int64_t first_line = 1);

  // The pieces the tokenizer makes of a source line (what translate() feeds translate_pieces()).
  std::vector<std::string> segment(const std::string& source) const { return tokenizer_.encode(source); }

  // Tokens of one source line as translate() counts them against max_source_tokens (no </s>).
  // Safe to call from any thread: it only reads the tokenizer.
  int64_t source_tokens(const std::string& source) const;

  // Source ids without </s> (as a TokenDataset holds them) -> hypotheses, in input order.
  std::vector<std::vector<Hypothesis>> translate_ids(const std::vector<std::vector<int64_t>>& sources,
                                                     const TranslateOptions& options);

  // Output ids -> text: vocabulary pieces, then the tokenizer's decode.
  std::string detokenize(const std::vector<int64_t>& ids) const;
  // Pieces -> text: the tokenizer's decode.
  std::string detokenize(const std::vector<std::string>& pieces) const { return tokenizer_.decode(pieces); }

 private:
  Seq2SeqModelImpl& model_;
  const Vocabulary& vocabulary_;
  const Tokenizer& tokenizer_;
  torch::Device device_;
  Precision precision_;
};

}  // namespace mixseq
