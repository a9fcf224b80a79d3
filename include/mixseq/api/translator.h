// mixseq::Translator: a trained translation checkpoint, ready to translate raw text.
//
//   #include <mixseq/mixseq.h>
//   mixseq::Translator translator("runs/demo/checkpoint_best.pt");
//   for (const auto& result : translator.translate_batch({"one hundred and two"}))
//     std::cout << result.text << '\n';
//
// Contract. A Translator owns everything a translation needs: the model's weights on its device,
// the vocabulary, the tokenizer (BPE or SentencePiece, stored in the checkpoint) and the search
// the run was validated with. translate_batch() takes raw sentences and returns, for each in input
// order, its best translation as `mixseq translate` writes it (the same code: the command is built
// on this class), and with TranslationOptions::nbest > 1 the others, best first. An empty sentence
// gives an empty translation without running the model. Defaults are those of `mixseq translate`:
// every setting left unset here takes the command's default or the checkpoint's. Sources may also
// come already segmented, as CTranslate2 takes them: lists of vocabulary pieces (tokenize() makes
// them from text; a piece outside the vocabulary reads as <unk>); each hypothesis carries its
// output pieces too.
//
// Threads. One Translator may be shared: calls to translate_batch() from several threads are
// served one at a time (each call already decodes its batches on all the CPU threads). For
// calls that really run side by side, create one Translator per thread.
//
// Errors. Every failure (an unreadable or corrupt checkpoint, a bad option, a source longer than
// max_source_tokens) throws std::runtime_error (mixseq::Error) whose message says what is wrong
// and, where there is one, the fix. A Translator that threw in translate_batch() stays usable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mixseq {

// Set once, when the checkpoint is opened.
struct TranslatorOptions {
  std::string device = "auto";     // auto (CUDA when LibTorch sees one, else the CPU), cpu, cuda or cuda:N
  std::string precision = "fp32";  // auto (bf16 where the device computes it natively), fp32, bf16, fp16 or
                                   // tf32 (the last two on a GPU only)
  int64_t max_tokens = 8192;       // source tokens per batch (sentences x longest source)
  int64_t max_source_tokens = 1024;  // longest source, in tokens: a longer one is an error; 0 = no limit
  bool truncate_long_sources = false;  // cut sources longer than max_source_tokens instead of failing
  int threads = 0;  // CPU threads of LibTorch and OpenBLAS, as `mixseq --threads`: 0 = every usable core,
                    // fewer while other processes keep cores busy (docs/threads.md). Process-wide: the first
                    // Translator with threads >= 0 decides, and also tunes the process as the mixseq program
                    // does (OpenBLAS's kernels for this CPU, malloc keeping freed memory); -1 = leave the
                    // process as it is
  int workers = 0;  // CPU: batches decoded side by side, each on its share of the threads; 0 = one per
                    // thread when there are that many batches, 1 = one batch at a time on all threads
};

// Set per call; each search setting left unset keeps the checkpoint's validation_search, as the
// flags of `mixseq translate` do.
struct TranslationOptions {
  std::optional<int64_t> beam_size;        // hypotheses kept per sentence; 1 = greedy search
  std::optional<double> length_penalty;    // GNMT alpha in lp(Y) = ((5 + |Y|) / 6)^alpha; 0 disables
  std::optional<double> coverage_penalty;  // GNMT beta; 0 disables
  std::optional<double> max_len_a;         // max output tokens = floor(a * source tokens + b)
  std::optional<int64_t> max_len_b;
  int64_t nbest = 1;                       // hypotheses returned per sentence, best first; at most beam_size
  bool return_alignment = false;           // fill TranslationHypothesis::alignment
  int64_t first_line = 1;                  // the number errors give the first sentence (a caller that
                                           // streams a file passes the number of its batch's first line)
};

struct TranslationHypothesis {
  std::string text;                // detokenized translation
  double score = 0;                // log P(Y|X) with the GNMT length and coverage penalties
  int64_t tokens = 0;              // output tokens (vocabulary pieces), without </s>
  std::vector<int64_t> alignment;  // with return_alignment: per output piece, the source piece it
                                   // attended most (0-based; the source's </s> is its length); else empty
  std::vector<std::string> pieces;  // the output's vocabulary pieces, without </s>: text is detokenize(pieces)
};

struct TranslationResult {
  std::string text;  // the best translation: hypotheses[0].text
  double score = 0;  // its score: hypotheses[0].score
  std::vector<TranslationHypothesis> hypotheses;  // nbest of them, best first (one for an empty sentence)
};

class Translator {
 public:
  // Opens a checkpoint written by `mixseq train`, `average-checkpoints` or `quantize`.
  explicit Translator(const std::string& checkpoint_path, const TranslatorOptions& options = {});
  // Several checkpoints of one vocabulary: their ensemble (log-probabilities averaged).
  explicit Translator(const std::vector<std::string>& checkpoint_paths, const TranslatorOptions& options = {});
  ~Translator();
  Translator(Translator&&) noexcept;
  Translator& operator=(Translator&&) noexcept;
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  // Raw sentences -> one result per sentence, in input order.
  std::vector<TranslationResult> translate_batch(const std::vector<std::string>& sentences,
                                                 const TranslationOptions& options = {}) const;
  // Sentences as lists of vocabulary pieces -> one result per sentence, in input order; the same
  // translations as translate_batch(sentences) when the pieces are tokenize(sentence).
  std::vector<TranslationResult> translate_batch(const std::vector<std::vector<std::string>>& pieces,
                                                 const TranslationOptions& options = {}) const;

  // The checkpoint's tokenizer (BPE, SentencePiece or none): text -> the pieces translate_batch
  // feeds the model, and pieces -> text as translations are written.
  std::vector<std::string> tokenize(const std::string& sentence) const;
  std::string detokenize(const std::vector<std::string>& pieces) const;

  // `options` with every unset search setting filled in from the checkpoint: the search that
  // translate_batch(sentences, options) runs. Throws when a setting is out of range.
  TranslationOptions resolve(const TranslationOptions& options = {}) const;

  std::string device() const;     // where the model runs, e.g. "cpu" or "cuda:0"
  std::string precision() const;  // fp32, bf16, fp16 or tf32 (auto resolved)
  // The quantized layers' mode for a checkpoint written by `mixseq quantize` (int8: their products
  // in int8; simulated: fp32 on the int8 grid), "" for a float checkpoint. precision() is the rest's.
  std::string quantization() const;
  int64_t vocabulary_size() const;
  // The languages of the prepared data it was trained on (`mixseq prepare --source-lang/--target-lang`);
  // "" for a checkpoint written before checkpoints kept them (2026-11-27).
  std::string source_language() const;
  std::string target_language() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mixseq
