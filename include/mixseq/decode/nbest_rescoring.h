// N-best rescoring with a mixseq language model (models/language_model.h): a second pass that
// re-ranks the n best hypotheses of a first-pass search (the CTC prefix beam search of
// decode/ctc_beam_search.h, with or without its n-gram shallow fusion) by
//
//   score'(y) = score(y) + lm_weight * ln p_lm(y) + word_bonus * |words of y|
//
// where score(y) is the first pass's ranking score and p_lm(y) the neural model's probability of the
// whole text, its end of sentence included: the text is segmented by the language model's own
// tokenizer (BPE, SentencePiece or words, whatever its checkpoint stores) into pieces t_1..t_n, and
//
//   ln p_lm(y) = sum_{i=1..n+1} ln p(t_i | </s>, t_1 .. t_{i-1}),  t_{n+1} = </s>
//
// Each text is scored alone, from the start of a sentence: the context of its first piece is one
// </s>, as the model saw it after every line of its training text (data/lm_text.h), with no
// memory of other sentences. A piece that the model's vocabulary lacks is read as <unk> (the
// model then gives it the probability it learnt for <unk>, usually small) and counted. This is the
// second pass of Jasper (Li et al. 2019, which rescore the beam's hypotheses with a Transformer-XL)
// and of NeMo's neural rescorer (new score = score + alpha * lm score + beta * length); the word
// bonus offsets the LM's cost per word (too low and short hypotheses win, too high and words are
// inserted), as beta does in the first pass.
//
// Batching: the texts of one call (the n-best of many utterances) are sorted by length and run
// in batches of up to max_tokens positions (texts x longest); the rows are padded on the right,
// which a left-to-right model (causal attention, a recurrence) never reads for the positions it
// scores, so a text's score does not depend on its batch. The model is used with same_length off (Transformer-XL's evaluation mask depends on the
// padded length otherwise) and no memory.
//
// Ownership and threading: the scorer owns its model (moved in) and runs it on one device in
// evaluation mode; it is not thread-safe (one call at a time), like the model it holds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/models/trained_model.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct SentenceLmScore {
  double log_prob = 0;         // ln p_lm(pieces of the text, then </s>), natural log
  int64_t tokens = 0;          // positions scored: the text's pieces plus </s>
  int64_t unknown_tokens = 0;  // pieces outside the model's vocabulary, scored as <unk>
};

class SentenceLmScorer {
 public:
  // `language_model`: a checkpoint opened with load_trained_language_model (any architecture of the
  // language-model family). Sets the model's context to same_length off.
  SentenceLmScorer(TrainedLanguageModel language_model, const torch::Device& device, Precision precision);
  // Opens a checkpoint written by `mixseq train` for a language model. A checkpoint of another
  // family (a speech recognizer's, a translation model's) or no checkpoint at all is an error
  // naming the file.
  static std::shared_ptr<const SentenceLmScorer> load(const std::string& checkpoint_path, const torch::Device& device,
                                                      Precision precision);

  // ln p_lm of each text (see above), in input order; an empty text scores p(</s> | </s>).
  std::vector<SentenceLmScore> score(const std::vector<std::string>& texts, int64_t max_tokens = 4096) const;

  // The pieces of `text` as score() feeds them, </s> excluded (for tests and messages).
  std::vector<int64_t> token_ids(const std::string& text, int64_t* unknown_tokens = nullptr) const;

  const TrainedLanguageModel& language_model() const { return lm_; }

 private:
  TrainedLanguageModel lm_;
  torch::Device device_;
  Precision precision_;
};

struct NbestRescoringOptions {
  double lm_weight = 0.0;     // W: weight of ln p_lm(text and </s>) (natural log) in the new score; 0 = LM not counted
  double word_bonus = 0.0;    // added to the new score per word (run of non-space characters); 0 disables
  int64_t max_tokens = 4096;  // language-model positions per batch (texts x longest, the leading </s> included)
  std::shared_ptr<const SentenceLmScorer> language_model;  // null = no rescoring
};

// The new scores of one n-best list: search_scores[i] + lm_weight * lm[i].log_prob + word_bonus *
// (words of texts[i]). The three vectors have one entry per hypothesis.
std::vector<double> rescored_scores(const std::vector<std::string>& texts, const std::vector<double>& search_scores,
                                    const std::vector<SentenceLmScore>& lm, const NbestRescoringOptions& options);

// Words of a transcript as the word bonus counts them: maximal runs of non-space characters.
int64_t count_words(const std::string& text);

}  // namespace mixseq
