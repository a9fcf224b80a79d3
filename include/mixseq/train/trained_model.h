// TrainedModel: a checkpoint opened for translation, with everything that came inside it:
// the configuration it was trained with, its vocabulary, its tokenizer and its weights on the
// requested device, in eval mode.
#pragma once

#include <memory>
#include <string>

#include "mixseq/models/seq2seq_model.h"
#include "mixseq/text/tokenizer.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/train/train_config.h"

namespace mixseq {

struct TrainedModel {
  TrainConfig config;
  Vocabulary vocabulary;
  std::unique_ptr<Tokenizer> tokenizer;
  Seq2SeqModel model;
};

TrainedModel load_trained_model(const std::string& checkpoint_path, const torch::Device& device);

}  // namespace mixseq
