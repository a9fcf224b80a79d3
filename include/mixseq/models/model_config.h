// ModelConfig: which architecture to build and its shape. The vocabulary size is not part of
// it: it comes from the data (or the checkpoint) the model is built for.
#pragma once

#include <cstdint>
#include <string>

#include "mixseq/util/config.h"

namespace mixseq {

// GNMT v2 as in NVIDIA's PyTorch GNMT example and the MLPerf reference (Wu et al. 2016).
struct GnmtConfig {
  int64_t hidden_size = 1024;     // LSTM units per layer (per direction in encoder layer 1) and embedding width
  int64_t num_layers = 4;         // LSTM layers in the encoder and in the decoder (at least 2)
  double dropout = 0.2;           // between layers; 0 disables
  bool share_embeddings = true;   // one embedding matrix for source and target (joint vocabulary)
  double init_range = 0.1;        // parameters start uniform in [-init_range, init_range]

  void visit(ConfigVisitor& v) {
    v.field("hidden_size", hidden_size, "LSTM units per layer and embedding width");
    v.field("num_layers", num_layers, "LSTM layers in encoder and decoder");
    v.field("dropout", dropout, "dropout between layers; 0 disables");
    v.field("share_embeddings", share_embeddings, "one embedding matrix for source and target");
    v.field("init_range", init_range, "uniform initialization range");
  }
};

struct ModelConfig {
  std::string arch = "gnmt";  // the architecture, a name in src/models/registry.cpp
  GnmtConfig gnmt;

  void visit(ConfigVisitor& v) {
    v.choice("arch", arch, {"gnmt"}, "model architecture");
    v.section("gnmt", gnmt);
  }
};

}  // namespace mixseq
