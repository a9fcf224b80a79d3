// The shape of one Transformer encoder or decoder layer (nn/transformer_encoder_layer.h,
// nn/transformer_decoder_layer.h); models/model_config.h's TransformerConfig fills it.
#pragma once

#include <cstdint>

namespace mixseq {

struct TransformerLayerOptions {
  int64_t embed_dim = 512;          // D, the width of the residual stream
  int64_t ffn_dim = 2048;           // inner width of the position-wise feed-forward network
  int64_t num_heads = 8;            // attention heads; embed_dim must be a multiple
  double dropout = 0.1;             // on each sublayer's output before the residual add; 0 disables
  double attention_dropout = 0.0;   // on attention weights; 0 disables
  double activation_dropout = 0.0;  // after the feed-forward network's ReLU; 0 disables
  bool normalize_before = false;    // false: LayerNorm after each residual add (post-norm, the paper);
                                    // true: LayerNorm on each sublayer's input (pre-norm)
};

}  // namespace mixseq
