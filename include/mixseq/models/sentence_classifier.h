// SentenceClassifier: text in, a score per label out; the model of the classification task
// (train/classification_task.h), built as ULMFiT builds its classifier (Howard & Ruder 2018):
//
//   encoder  the layers of a language model (model.lm_classifier.encoder: lstm_lm, models/lstm_lm.h,
//            or transformer_xl, models/transformer_xl.h), built without its output layer, so that a
//            pretrained language model's checkpoint loads into it as it is: tokens [B, T] -> states
//            [B, T, H] (LanguageModelImpl::encode, with no memory: each text stands alone)
//   pooling  each row's first lengths[b] states -> one vector [B, P] (nn/sequence_pooling.h:
//            last, mean, max, or concat = [last; max; mean], P = 3 H)
//   head     dropout, Linear(P, head_hidden), ReLU, dropout, Linear(head_hidden, C) -> logits [B, C];
//            with head_hidden 0: dropout, Linear(P, C)
//
// Input layout (data/classification_data.h's batches): row b is </s>, the text's ids, </s>, then
// kPadId to the batch's width; lengths[b] counts the row's ids with both </s>. The leading </s>
// is what a language model trained on lines (every line ended by </s>) saw before each line. Both
// encoders are causal, so a row's states do not depend on the padding after it.
//
// Parameter names: encoder.<the language model's names>, head.hidden.{weight,bias} (absent with
// head_hidden 0), head.output.{weight,bias}. Not thread-safe; use one model per thread.
#pragma once

#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "mixseq/models/language_model.h"
#include "mixseq/models/model_config.h"
#include "mixseq/nn/sequence_pooling.h"

namespace mixseq {

class SentenceClassifierImpl : public torch::nn::Module {
 public:
  // config.lm_classifier and the encoder's section (config.lstm_lm or config.transformer_xl). Throws
  // mixseq::Error naming the key for invalid values: fewer than 2 classes, a negative size.
  SentenceClassifierImpl(const ModelConfig& config, int64_t vocab_size);

  // tokens [B, T] int64, lengths [B] int64 (1..T) -> logits [B, C] fp32.
  torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& lengths);

  int64_t num_classes() const { return num_classes_; }
  int64_t vocab_size() const { return encoder_->vocab_size(); }
  LanguageModelModule encoder() const { return encoder_; }

  // The parameters in groups from the output down, for gradual unfreezing (ULMFiT §3.3): the head,
  // then the encoder's (LanguageModelImpl::layer_groups: its layers from the last, the first with
  // the word vectors).
  std::vector<std::vector<torch::Tensor>> layer_groups() const;

 private:
  int64_t num_classes_;
  SequencePooling pooling_;
  double head_dropout_;
  LanguageModelModule encoder_;
  torch::nn::Linear hidden_{nullptr};  // "head.hidden"; null with head_hidden 0
  torch::nn::Linear output_{nullptr};  // "head.output"
};
TORCH_MODULE(SentenceClassifier);

}  // namespace mixseq
