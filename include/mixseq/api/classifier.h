// mixseq::Classifier: a trained sentence classifier's checkpoint (the LSTM classifier of `mixseq
// train`, from scratch or transferred from a language model: docs/classification.md), ready to
// label text.
//
//   #include <mixseq/mixseq.h>
//   mixseq::Classifier classifier("runs/sst2/transfer/checkpoint_best.pt");
//   for (const auto& c : classifier.classify_batch({"a gripping , funny film", "dull"}))
//     std::cout << c.label << '\t' << c.probability << '\n';
//
// Contract. A Classifier owns the weights on its device, the vocabulary, the tokenizer and the
// labels stored in the checkpoint. classify_batch() reads each text as the training data was read
// (the stored tokenizer; a piece outside the vocabulary reads as <unk> and is counted) and gives
// what `mixseq classify --json` writes for it: the likeliest label, its probability and every
// label's probability.
//
// Threads. One Classifier may be shared: calls from several threads are served one at a time (each
// already runs on all the CPU threads). For calls that really run side by side, create one per thread.
//
// Errors. Every failure (an unreadable or corrupt checkpoint, a checkpoint of another task, a text
// with no words, malformed UTF-8, a bad option) throws std::runtime_error (mixseq::Error) whose
// message says what is wrong ("text 2 is empty"). A Classifier that threw stays usable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/api/model_options.h"

namespace mixseq {

using ClassifierOptions = ModelOptions;  // device, precision, threads (api/model_options.h)

// Set per call: `mixseq classify`'s settings and defaults.
struct ClassifyOptions {
  int64_t max_tokens = 8192;         // tokens per batch (texts x longest; --max-tokens)
  int64_t max_source_tokens = 1024;  // longest text, in the model's tokens: a longer one is an error; 0 = no limit
};

struct Classification {
  std::string label;                  // the likeliest label, as the training data wrote it
  double probability = 0;             // its probability
  std::vector<double> probabilities;  // every label's probability, in the order of Classifier::labels()
  int64_t unknown_words = 0;          // pieces of the text outside the vocabulary
};

class Classifier {
 public:
  // Opens a classifier's checkpoint written by `mixseq train`.
  explicit Classifier(const std::string& checkpoint_path, const ClassifierOptions& options = {});
  ~Classifier();
  Classifier(Classifier&&) noexcept;
  Classifier& operator=(Classifier&&) noexcept;

  // One Classification per text, in order.
  std::vector<Classification> classify_batch(const std::vector<std::string>& texts,
                                             const ClassifyOptions& options = {}) const;

  const std::vector<std::string>& labels() const;  // in id order

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mixseq
