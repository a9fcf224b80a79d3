// The model registry: builds the architecture a ModelConfig names.
#pragma once

#include <cstdint>

#include "mixseq/models/model_config.h"
#include "mixseq/models/seq2seq_model.h"

namespace mixseq {

// Throws mixseq::Error listing the known architectures for an unknown config.arch.
Seq2SeqModel build_model(const ModelConfig& config, int64_t vocab_size);

}  // namespace mixseq
