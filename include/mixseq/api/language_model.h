// mixseq::LanguageModel: a trained language-model checkpoint (Transformer-XL or the LSTM language
// model), ready to score, evaluate and continue raw text.
//
//   #include <mixseq/mixseq.h>
//   mixseq::LanguageModel lm("runs/wt2/checkpoint_best.pt");
//   for (const auto& s : lm.score_batch({"the game began .", "began the . game"}))
//     std::cout << s.log_prob << '\n';                     // ln p of each sentence and its end
//   std::cout << lm.perplexity(lines).perplexity << '\n';  // as mixseq lm-eval on those lines
//   std::cout << lm.generate("The game began") << '\n';    // as mixseq generate --prompt
//
// Contract. A LanguageModel owns what the three need: the weights on its device, the vocabulary
// and the tokenizer stored in the checkpoint. Text is segmented by that tokenizer as the training
// text was; a piece the vocabulary lacks is read as <unk> and counted.
// - score_batch(): each sentence alone, from the start of a line (its first piece follows one
//   </s>, as every line of the training text did), its own </s> included:
//   ln p = sum of ln p(piece_i | </s>, pieces before it), natural log, no memory of the other
//   sentences (the neural rescoring of `mixseq transcribe --rescore-lm`, decode/nbest_rescoring.h).
// - perplexity(): the lines as one text, each ended by </s>, scored as `mixseq lm-eval -i` scores
//   a file with the same settings (parallel streams, segments, Transformer-XL's long memory):
//   equal to the command's loss and perplexity.
// - generate(): the continuation `mixseq generate --prompt` writes, as text (a line break for each
//   end of sentence), with the same sampling settings and seed.
//
// Threads. One LanguageModel may be shared: calls from several threads are served one at a time
// (each already runs on all the CPU threads). For calls that really run side by side, create one
// per thread.
//
// Errors. Every failure (an unreadable or corrupt checkpoint, a checkpoint of another task,
// malformed UTF-8, a bad option, a text too short for its streams) throws std::runtime_error
// (mixseq::Error) whose message says what is wrong. A LanguageModel that threw stays usable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/api/model_options.h"

namespace mixseq {

using LanguageModelOptions = ModelOptions;  // device, precision, threads (api/model_options.h)

struct SentenceScore {
  double log_prob = 0;         // ln p(the sentence's pieces, then </s>), natural log
  int64_t tokens = 0;          // positions scored: the pieces plus </s>
  int64_t unknown_tokens = 0;  // pieces outside the vocabulary, scored as <unk>
};

// `mixseq lm-eval`'s settings and defaults (Transformer-XL's eval.py: segments of 64, memory 640,
// clamp_len 400, same_length). The LSTM language model carries its state instead of a memory
// and ignores mem_len, clamp_len and same_length.
struct PerplexityOptions {
  int64_t batch_size = 10;    // parallel streams
  int64_t tgt_len = 64;       // tokens per segment
  int64_t mem_len = 640;      // memory length (earlier tokens attended to)
  int64_t clamp_len = 400;    // largest relative distance encoded; -1 = no clamp
  bool same_length = true;    // every position attends to as many tokens
  int64_t max_segments = 0;   // score only the first N segments; 0 = all
  // The continuous cache (Grave et al. 2017, decode/continuous_cache.h): each token's probability
  // mixed with a copy of the words that followed similar states among the last cache_window
  // positions of its stream. cache_window 0 = the model alone.
  int64_t cache_window = 0;
  double cache_theta = 0.3;   // > 0
  double cache_lambda = 0.1;  // in [0, 1]
};

struct TextPerplexity {
  double loss = 0;             // mean negative log-likelihood per scored token, nats
  double perplexity = 0;       // exp(loss)
  int64_t tokens = 0;          // tokens scored (the tail that does not fill a stream is not)
  int64_t unknown_tokens = 0;  // pieces of the text outside the vocabulary, read as <unk>
};

// `mixseq generate`'s settings and defaults.
struct GenerateOptions {
  int64_t max_tokens = 100;   // tokens to generate
  bool greedy = false;        // the likeliest token each time instead of sampling
  double temperature = 1.0;   // > 0
  int64_t top_k = 0;          // sample among the k likeliest; 0 = all
  double top_p = 1.0;         // sample within the smallest set of probability >= p; 1 = all
  uint64_t seed = 1;          // of the sampling
  bool stop_at_eos = false;   // stop at the end of the line
  int64_t mem_len = -1;       // memory length; -1 = the model's
};

class LanguageModel {
 public:
  // Opens a language-model checkpoint written by `mixseq train`.
  explicit LanguageModel(const std::string& checkpoint_path, const LanguageModelOptions& options = {});
  ~LanguageModel();
  LanguageModel(LanguageModel&&) noexcept;
  LanguageModel& operator=(LanguageModel&&) noexcept;

  std::vector<SentenceScore> score_batch(const std::vector<std::string>& sentences) const;
  TextPerplexity perplexity(const std::vector<std::string>& lines, const PerplexityOptions& options = {}) const;
  std::string generate(const std::string& prompt, const GenerateOptions& options = {}) const;

  int64_t vocab_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mixseq
