// The model registry: builds the architecture a ModelConfig names (model.arch).
//
// Every architecture belongs to one family, which says what it is for: a sequence-to-sequence
// model (models/seq2seq_model.h) trains on sentence pairs and translates; a language model
// (models/language_model.h) trains on one text stream and scores or generates. Asking for one
// family and naming an architecture of the other (a language model's checkpoint given to
// `mixseq translate`) is an error that says so and lists the architectures that would do.
// src/models/registry.cpp is the only place that lists them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/models/language_model.h"
#include "mixseq/models/model_config.h"
#include "mixseq/models/seq2seq_model.h"

namespace mixseq {

enum class ModelFamily {
  kSeq2Seq,        // encoder-decoder: gnmt, transformer
  kLanguageModel,  // decoder-only with a memory across segments: transformer_xl
};

// "sequence-to-sequence (translation) model" or "language model", for messages.
std::string model_family_name(ModelFamily family);

// The family of architecture `arch`; throws mixseq::Error listing the known names for an unknown one.
ModelFamily model_family(const std::string& arch);

// The architectures of `family`, sorted; empty when it has none yet.
std::vector<std::string> model_architectures(ModelFamily family);

// Throw mixseq::Error for an unknown config.arch (listing the known ones) and for an
// architecture of the other family (naming its family and the architectures of this one).
Seq2SeqModel build_seq2seq_model(const ModelConfig& config, int64_t vocab_size);
LanguageModel build_language_model(const ModelConfig& config, int64_t vocab_size);

}  // namespace mixseq
