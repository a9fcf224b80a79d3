#include "mixseq/api/classifier.h"

#include <mutex>

#include "api/process_setup.h"
#include "mixseq/decode/sentence_classification.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

// `mixseq classify`'s set-up (cli/classify_command.cpp): device and precision, then the checkpoint.
struct Classifier::Impl {
  Impl(const std::string& path, const ClassifierOptions& options)
      : device((api::configure_process_threads(options.threads, "ClassifierOptions::threads"),
                resolve_device(options.device, "device"))),
        precision(resolve_precision(options.precision, device)),
        classifier((configure_precision(precision, device), load_trained_classifier(path, device))) {}

  torch::Device device;
  Precision precision;
  TrainedClassifier classifier;
  std::mutex mutex;  // the model runs one batch at a time
};

Classifier::Classifier(const std::string& checkpoint_path, const ClassifierOptions& options)
    : impl_(std::make_unique<Impl>(checkpoint_path, options)) {}

Classifier::~Classifier() = default;
Classifier::Classifier(Classifier&&) noexcept = default;
Classifier& Classifier::operator=(Classifier&&) noexcept = default;

std::vector<Classification> Classifier::classify_batch(const std::vector<std::string>& texts,
                                                       const ClassifyOptions& options) const {
  MIXSEQ_CHECK(impl_, "this Classifier was moved from");
  MIXSEQ_CHECK(options.max_tokens >= 1, "ClassifyOptions::max_tokens is ", options.max_tokens,
               "; it must be at least 1");
  MIXSEQ_CHECK(options.max_source_tokens >= 0, "ClassifyOptions::max_source_tokens is ", options.max_source_tokens,
               "; it must be 0 (no limit) or more");
  ClassificationOptions classify;
  classify.max_tokens = options.max_tokens;
  classify.max_text_tokens = options.max_source_tokens;
  std::vector<ClassPrediction> predictions;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    predictions = classify_texts(impl_->classifier, texts, classify, impl_->precision, impl_->device);
  }
  std::vector<Classification> results;
  results.reserve(predictions.size());
  for (auto& p : predictions)
    results.push_back({impl_->classifier.labels.at(static_cast<size_t>(p.label)), p.probability,
                       std::move(p.probabilities), p.unknown_tokens});
  return results;
}

const std::vector<std::string>& Classifier::labels() const {
  MIXSEQ_CHECK(impl_, "this Classifier was moved from");
  return impl_->classifier.labels;
}

}  // namespace mixseq
