#include "mixseq/models/sentence_classifier.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/container/sequential.h>

#include "mixseq/models/lstm_lm.h"
#include "mixseq/models/transformer_xl.h"
#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

const LmClassifierConfig& checked(const ModelConfig& config) {
  const LmClassifierConfig& c = config.lm_classifier;
  MIXSEQ_CHECK(c.num_classes >= 2, "model.lm_classifier.num_classes must be at least 2, got ", c.num_classes,
               " (0 means as many as the data has: the training task fills it in)");
  MIXSEQ_CHECK(c.head_hidden >= 0, "model.lm_classifier.head_hidden must be 0 or more, got ", c.head_hidden);
  MIXSEQ_CHECK(c.head_dropout >= 0 && c.head_dropout < 1, "model.lm_classifier.head_dropout must be in [0, 1), got ",
               c.head_dropout);
  return c;
}

// The encoder: the language model named by config.lm_classifier.encoder, without its output layer.
LanguageModelModule make_encoder(const ModelConfig& config, int64_t vocab_size) {
  const std::string& encoder = config.lm_classifier.encoder;
  if (encoder == "lstm_lm") return LstmLmModel(config.lstm_lm, vocab_size, /*output_layer=*/false).ptr();
  if (encoder == "transformer_xl")
    return TransformerXlModel(config.transformer_xl, vocab_size, /*output_layer=*/false).ptr();
  throw Error(str_cat("model.lm_classifier.encoder must be lstm_lm or transformer_xl, not '", encoder, "'"));
}

}  // namespace

SentenceClassifierImpl::SentenceClassifierImpl(const ModelConfig& config, int64_t vocab_size)
    : num_classes_(checked(config).num_classes),
      pooling_(sequence_pooling(config.lm_classifier.pooling, "model.lm_classifier.pooling")),
      head_dropout_(config.lm_classifier.head_dropout),
      encoder_(register_module("encoder", make_encoder(config, vocab_size))) {
  const int64_t pooled = pooled_size(pooling_, encoder_->state_size());
  const int64_t hidden = config.lm_classifier.head_hidden;
  auto head = register_module("head", std::make_shared<torch::nn::Module>());
  if (hidden > 0) hidden_ = head->register_module("hidden", torch::nn::Linear(pooled, hidden));
  output_ = head->register_module("output", torch::nn::Linear(hidden > 0 ? hidden : pooled, num_classes_));
}

torch::Tensor SentenceClassifierImpl::forward(const torch::Tensor& tokens, const torch::Tensor& lengths) {
  const bool training = is_training();
  const auto states = encoder_->encode(tokens, {}).first;                 // [B, T, H]
  auto x = hashed_dropout(pool_sequences(states, lengths, pooling_), head_dropout_, training);  // [B, P]
  if (hidden_) x = hashed_dropout(at::relu(hidden_(x)), head_dropout_, training);              // [B, head_hidden]
  return output_(x).to(at::kFloat);                                       // [B, C]
}

std::vector<std::vector<torch::Tensor>> SentenceClassifierImpl::layer_groups() const {
  std::vector<std::vector<torch::Tensor>> groups;
  groups.push_back(named_children()["head"]->parameters());
  for (auto& group : encoder_->layer_groups()) groups.push_back(std::move(group));
  return groups;
}

}  // namespace mixseq
