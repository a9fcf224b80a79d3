// ModelConfig: which architecture to build and its shape. The vocabulary size is not part of
// it: it comes from the data (or the checkpoint) the model is built for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// The Transformer of Vaswani et al. 2017 as fairseq's `transformer` builds it (Ott et al. 2018,
// "Scaling Neural Machine Translation"); the defaults are the paper's base model.
struct TransformerConfig {
  int64_t embed_dim = 512;                       // D: embedding width and width of every layer
  int64_t ffn_dim = 2048;                        // inner width of the feed-forward networks
  int64_t heads = 8;                             // attention heads; embed_dim must be a multiple
  int64_t encoder_layers = 6;                    // encoder layers (at least 1)
  int64_t decoder_layers = 6;                    // decoder layers (at least 1)
  double dropout = 0.1;                          // on embeddings and sublayer outputs; 0 disables
  double attention_dropout = 0.0;                // on attention weights; 0 disables
  double activation_dropout = 0.0;               // after the feed-forward ReLU; 0 disables
  bool normalize_before = false;                 // false: post-norm (the paper); true: pre-norm with a final
                                                 // LayerNorm on the encoder and decoder outputs
  bool share_all_embeddings = true;              // one matrix for encoder input, decoder input and output
                                                 // projection (joint vocabulary)
  bool share_decoder_input_output_embed = true;  // when share_all_embeddings is false: one matrix for the
                                                 // decoder input and the output projection

  void visit(ConfigVisitor& v) {
    v.field("embed_dim", embed_dim, "embedding and layer width");
    v.field("ffn_dim", ffn_dim, "inner width of the feed-forward networks");
    v.field("heads", heads, "attention heads; embed_dim must be a multiple");
    v.field("encoder_layers", encoder_layers, "encoder layers");
    v.field("decoder_layers", decoder_layers, "decoder layers");
    v.field("dropout", dropout, "dropout on embeddings and sublayer outputs; 0 disables");
    v.field("attention_dropout", attention_dropout, "dropout on attention weights; 0 disables");
    v.field("activation_dropout", activation_dropout, "dropout after the feed-forward ReLU; 0 disables");
    v.field("normalize_before", normalize_before, "pre-norm (true) or post-norm as in the paper (false)");
    v.field("share_all_embeddings", share_all_embeddings,
            "one matrix for encoder input, decoder input and output projection");
    v.field("share_decoder_input_output_embed", share_decoder_input_output_embed,
            "one matrix for decoder input and output projection (when share_all_embeddings is false)");
  }
};

// Every architecture's name, sorted: the choices of model.arch, listed by the registry
// (src/models/registry.cpp) and nowhere else.
const std::vector<std::string>& architecture_names();

struct ModelConfig {
  std::string arch = "gnmt";  // the architecture, a name in src/models/registry.cpp
  GnmtConfig gnmt;
  TransformerConfig transformer;

  void visit(ConfigVisitor& v) {
    v.choice("arch", arch, architecture_names(), "model architecture");
    v.section("gnmt", gnmt);
    v.section("transformer", transformer);
  }
};

}  // namespace mixseq
