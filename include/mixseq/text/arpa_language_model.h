// ArpaLanguageModel: a word n-gram language model read from an ARPA file (the text format that
// SRILM, KenLM's lmplz and Debian's irstlm write), scored as KenLM and SRILM score it. CTC beam
// search (decode/ctc_beam_search.h) fuses it with a speech recognizer's outputs.
//
// The format (a plain or .gz file; lines before "\data\" are ignored, blank lines are skipped):
//   \data\                     the header
//   ngram 1=<count>              one line per order 1..N
//   ngram 2=<count>
//   \1-grams:
//   <log10 p>  <w1>  [<log10 backoff>]          orders below N may have a backoff weight
//   \2-grams:
//   <log10 p>  <w1> <w2>  [<log10 backoff>]
//   ...
//   \N-grams:
//   <log10 p>  <w1> ... <wN>                    the highest order has none
//   \end\                      the end
// Fields are separated by spaces or tabs. Anything else is an error "<path>:<line>: <what>": a
// count line that is not "ngram N=C", orders out of sequence, a section whose entries differ
// from its declared count, an entry with the wrong number of fields, a number that does not
// parse (or a probability above 0 or NaN), a word of a longer n-gram missing from the unigrams, a
// repeated n-gram, a missing "\end\".
//
// Scoring (Katz backoff, SRILM's and KenLM's rule): with history h = h_1 ... h_k (oldest first;
// only its last N-1 words count),
//   log10 p(w | h) = log10 p(h w)                              if the n-gram "h w" is listed,
//                  = log10 bow(h) + log10 p(w | h_2 ... h_k)   otherwise,
// where bow(h) is h's backoff weight (0 in log10 when h is not listed or has none), ending at
// the unigram p(w). A word that is not in the model scores as <unk> (and matches <unk> in
// n-grams, in histories too). Without <unk> in the file, an unknown word gets
// kArpaMissingUnknownLog10Prob, as KenLM substitutes, and matches no n-gram.
//
// An ArpaLanguageModel is immutable after load: const calls may run in parallel from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mixseq {

// log10 p(<unk>) when the file does not list <unk> (KenLM: "Substituting log10 probability -100").
inline constexpr double kArpaMissingUnknownLog10Prob = -100.0;

class ArpaLanguageModel {
 public:
  using WordId = int32_t;
  static constexpr WordId kNoWord = -1;  // an unknown word in a model without <unk>

  // Reads an ARPA file (plain, or gzip when the name ends in ".gz"); throws mixseq::Error naming
  // the file and line of what is malformed.
  static ArpaLanguageModel load(const std::string& path);
  // The same from text in memory; `name` stands for the path in errors.
  static ArpaLanguageModel from_text(std::string_view text, const std::string& name);

  int64_t order() const { return static_cast<int64_t>(orders_.size()); }  // N
  int64_t ngram_count(int64_t n) const;                                     // entries of order n (1..N)
  int64_t vocabulary_size() const { return static_cast<int64_t>(words_.size()); }

  // The id of `word`: its own if listed, else <unk>'s, else kNoWord.
  WordId word_id(std::string_view word) const;
  bool contains(std::string_view word) const { return vocabulary_.count(std::string(word)) > 0; }
  const std::string& word(WordId id) const { return words_.at(static_cast<size_t>(id)); }
  WordId begin_sentence_id() const { return begin_sentence_; }  // <s>, or kNoWord if not listed
  WordId end_sentence_id() const { return end_sentence_; }      // </s>, or kNoWord if not listed

  // log10 p(word | history) by the rule above; history[0..history_size) oldest first, any length.
  double log10_prob(const WordId* history, size_t history_size, WordId word) const;
  double log10_prob(const std::vector<WordId>& history, WordId word) const {
    return log10_prob(history.data(), history.size(), word);
  }

  // log10 p of a sentence of space-separated words: p(w_1 | <s>) ... p(w_n | ...) and, with
  // end_of_sentence, p(</s> | ...). Unknown words count with <unk>'s probability.
  double sentence_log10_prob(const std::vector<std::string>& words, bool end_of_sentence = true) const;

 private:
  friend struct ArpaLanguageModelBuilder;  // the parser (src/text/arpa_language_model.cpp)

  // The n-grams of one order: ids in one array (n per entry) with an open-addressing index.
  struct NgramTable {
    int64_t n = 0;
    std::vector<WordId> ids;          // [entries * n]
    std::vector<float> log10_probs;   // [entries]
    std::vector<float> log10_backoffs;  // [entries]; 0 when none
    std::vector<int32_t> slots;       // power-of-two size; entry index + 1, 0 = empty
    // The entry "context[0..n-1) last", or -1.
    int32_t find(const WordId* context, WordId last) const;
    void insert(const WordId* key, int32_t entry);  // key: n ids, not yet listed
  };

  std::vector<NgramTable> orders_;                    // orders_[n - 1]: the n-grams
  std::vector<std::string> words_;                    // by id (the unigrams in file order)
  std::unordered_map<std::string, WordId> vocabulary_;
  WordId unknown_ = kNoWord;
  WordId begin_sentence_ = kNoWord;
  WordId end_sentence_ = kNoWord;
};

}  // namespace mixseq
