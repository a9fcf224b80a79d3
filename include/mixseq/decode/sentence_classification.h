// Labelling text with a trained sentence classifier (models/trained_model.h's TrainedClassifier):
// what `mixseq classify` and serve's POST /classify run. Each text is read as the training data
// was (data/classification_data.h: the model's tokenizer and vocabulary, unknown pieces as <unk>),
// texts are batched by tokens in length order, and the answers come back in input order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/models/trained_model.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct ClassificationOptions {
  int64_t max_tokens = 8192;         // per batch: texts x longest (in ids, with the two </s>); at least one text a batch
  int64_t max_text_tokens = 1024;    // longest text, in the model's pieces (without the </s>); 0 = no limit
};

struct ClassPrediction {
  int64_t label = 0;                 // index into TrainedClassifier::labels: the likeliest
  double probability = 0;            // its probability
  std::vector<double> probabilities; // of every label, in label order
  int64_t unknown_tokens = 0;        // pieces of the text outside the vocabulary
};

// What classify_texts throws for a text it cannot read: which text (1-based) and why, so that a
// caller names its line without reading the message.
class ClassificationTextError : public Error {
 public:
  enum class Problem { kEmpty, kTooLong };
  ClassificationTextError(int64_t index, Problem problem, int64_t tokens, const std::string& message)
      : Error(message), index_(index), problem_(problem), tokens_(tokens) {}
  int64_t index() const { return index_; }
  Problem problem() const { return problem_; }
  int64_t tokens() const { return tokens_; }  // the text's pieces

 private:
  int64_t index_;
  Problem problem_;
  int64_t tokens_;
};

// texts -> one prediction each, in order. A text without pieces (empty or only spaces), or with more
// than max_text_tokens, throws ClassificationTextError ("text 3 is empty", "text 3 has 5000 tokens,
// over the limit of 1024") before any text is classified.
std::vector<ClassPrediction> classify_texts(const TrainedClassifier& classifier, const std::vector<std::string>& texts,
                                            const ClassificationOptions& options, Precision precision,
                                            const torch::Device& device);

}  // namespace mixseq
