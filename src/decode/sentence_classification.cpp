#include "mixseq/decode/sentence_classification.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <numeric>

#include "mixseq/data/classification_data.h"
#include "mixseq/util/error.h"

namespace mixseq {

std::vector<ClassPrediction> classify_texts(const TrainedClassifier& classifier, const std::vector<std::string>& texts,
                                            const ClassificationOptions& options, Precision precision,
                                            const torch::Device& device) {
  std::vector<LabelledExample> examples(texts.size());
  std::vector<ClassPrediction> predictions(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    examples[i].ids = classification_ids(texts[i], *classifier.tokenizer, classifier.vocabulary, 0,
                                         &predictions[i].unknown_tokens);
    const auto index = static_cast<int64_t>(i) + 1;
    const auto tokens = static_cast<int64_t>(examples[i].ids.size());
    if (tokens == 0)
      throw ClassificationTextError(index, ClassificationTextError::Problem::kEmpty, 0,
                                    str_cat("text ", index, " is empty: a classifier needs words to read"));
    if (options.max_text_tokens > 0 && tokens > options.max_text_tokens)
      throw ClassificationTextError(index, ClassificationTextError::Problem::kTooLong, tokens,
                                    str_cat("text ", index, " has ", tokens, " tokens, over the limit of ",
                                            options.max_text_tokens));
  }
  std::vector<int64_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return examples[a].ids.size() < examples[b].ids.size(); });
  torch::NoGradGuard no_grad;
  auto& model = *classifier.model.ptr();  // forward() is not const; the caller lends the model for the call
  for (size_t start = 0; start < order.size();) {
    // The longest text is the batch's last (length order): grow while texts x its length fits.
    size_t end = start + 1;
    while (end < order.size() &&
           static_cast<int64_t>(end + 1 - start) * static_cast<int64_t>(examples[order[end]].ids.size() + 2) <=
               options.max_tokens)
      ++end;
    const std::vector<int64_t> indices(order.begin() + static_cast<std::ptrdiff_t>(start),
                                       order.begin() + static_cast<std::ptrdiff_t>(end));
    const ClassificationBatch batch = make_classification_batch(examples, indices);
    torch::Tensor probabilities;
    {
      const AutocastScope autocast(precision, device);
      probabilities = at::softmax(model.forward(batch.tokens.to(device), batch.lengths.to(device)), 1)
                          .to(at::kDouble).cpu();  // [B, C]
    }
    const auto rows = probabilities.accessor<double, 2>();
    for (size_t b = 0; b < indices.size(); ++b) {
      ClassPrediction& prediction = predictions[static_cast<size_t>(indices[b])];
      for (int64_t c = 0; c < probabilities.size(1); ++c) {
        prediction.probabilities.push_back(rows[static_cast<int64_t>(b)][c]);
        if (rows[static_cast<int64_t>(b)][c] > prediction.probability) {
          prediction.probability = rows[static_cast<int64_t>(b)][c];
          prediction.label = c;
        }
      }
    }
    start = end;
  }
  return predictions;
}

}  // namespace mixseq
