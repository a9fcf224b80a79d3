// CTC prefix beam search (Hannun et al. 2014, "First-Pass Large Vocabulary Continuous Speech
// Recognition using Bi-Directional Recurrent DNNs", Algorithm 1; the algorithm of DeepSpeech2's and
// OpenSeq2Seq's ctc_decoders), with optional shallow fusion of a word n-gram language model.
//
// Each hypothesis is a prefix: a symbol sequence, blanks removed and repeats merged. Its CTC
// probability is kept as two sums over the frame paths that collapse to it, those ending in a blank
// (p_b) and those ending in its last symbol (p_nb), so that a repeated symbol extends the prefix
// only after a blank. Every frame, every prefix in the beam is extended by every symbol kept for
// that frame; prefixes reached in several ways add their probabilities; the beam_size best by
// score stay. Everything is in natural-log space, over log_softmax of the logits in fp32.
//
// Score (DeepSpeech2, Amodei et al. 2016, §7: Q(y) = log p_ctc(y|x) + alpha log p_lm(y) + beta word_count(y)):
//   score(y) = ln(p_b + p_nb) + alpha * ln p_lm(words of y) + beta * |words of y|
// A word is a maximal run of non-space symbols; its LM term (alpha ln p(word | <s> and the
// preceding words), converted from the model's log10) and its bonus beta are added when a space
// ends it, and for the last word when the utterance ends; with lm_end_of_sentence, alpha ln
// p(</s> | words) is added then too. Without a language model, alpha and the LM terms are 0, beta
// still counts words. Ranking during the search uses the words completed so far.
//
// Pruning (DeepSpeech2's ctc_decoders): per frame only the cutoff_top_n most likely symbols are
// tried, fewer if the most likely already reach cutoff_prob of the frame's probability mass.
//
// Results: with a beam wide enough to keep every prefix (and no pruning) the search is exact: each
// returned ctc_log_prob is log P(y|x) summed over all frame paths, and the n-best are the best
// label sequences by score. A narrower beam drops paths, so ctc_log_prob can only be lower.
// Frame alignments come from a Viterbi forced alignment of each returned sequence against the
// log-probabilities (its single most likely frame path): first and last frame of each symbol's
// run, as ctc_greedy_decode gives them.
//
// Threading: utterances of a batch are searched in parallel on LibTorch's intra-op threads. The
// language model is only read; one model may serve many searches at once.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "mixseq/decode/ctc_decoding.h"
#include "mixseq/text/arpa_language_model.h"
#include "mixseq/text/ctc_symbols.h"

namespace mixseq {

struct CtcBeamSearchOptions {
  int64_t beam_size = 1;         // prefixes kept per frame; 1 with no language model = greedy decoding
                                 // (ctc_greedy_decode) where a caller offers that (SpeechTranscriber)
  int64_t nbest = 1;             // hypotheses returned per utterance, best first; at most beam_size
  int64_t cutoff_top_n = 0;      // symbols tried per frame, most likely first; 0 = all
  double cutoff_prob = 1.0;      // stop adding symbols once they hold this much of the frame's probability; 1 = off
  double alpha = 0.0;            // language-model weight on ln p_lm (natural log); 0 with no language model
  double beta = 0.0;             // word insertion bonus, added per word; 0 disables
  bool lm_end_of_sentence = true;  // add alpha ln p(</s> | last words) when the utterance ends
  std::shared_ptr<const ArpaLanguageModel> language_model;  // word n-gram model; null = no fusion
};

struct CtcScoredHypothesis {
  CtcHypothesis hypothesis;   // symbols with their frame alignment (first/last frame of each symbol)
  double score = 0;           // ranking score: ctc_log_prob + alpha * ln p_lm + beta * words
  double ctc_log_prob = 0;    // ln P(symbols | x) over the frame paths the search kept
  double lm_log10_prob = 0;   // log10 p_lm of the words (with </s> if lm_end_of_sentence); 0 without a model
  int64_t words = 0;          // words counted for beta
};

// Checks the options against each other and the symbols (beam_size >= 1, 1 <= nbest <= beam_size,
// cutoff_prob in (0, 1], the space symbol present when a language model is given); throws mixseq::Error.
void check_ctc_beam_search_options(const CtcBeamSearchOptions& options, const CtcSymbols& symbols);

// logits [B, T', V] (any float dtype, any device), lengths [B] -> per utterance, up to nbest
// hypotheses, best first. V must equal symbols.size().
std::vector<std::vector<CtcScoredHypothesis>> ctc_beam_search(const torch::Tensor& logits,
                                                              const torch::Tensor& lengths,
                                                              const CtcSymbols& symbols,
                                                              const CtcBeamSearchOptions& options);

// One utterance: log_probs [T, V], already log-normalised per frame (fp32, CPU).
std::vector<CtcScoredHypothesis> ctc_beam_search_utterance(const torch::Tensor& log_probs,
                                                           const CtcSymbols& symbols,
                                                           const CtcBeamSearchOptions& options);

// The most likely frame path of `symbols` (Viterbi over the CTC topology) as a CtcHypothesis:
// first and last frame of each symbol's run. log_probs [T, V] (fp32, CPU); `symbols` must fit in T frames.
CtcHypothesis ctc_forced_alignment(const torch::Tensor& log_probs, const std::vector<int64_t>& symbols);

}  // namespace mixseq
