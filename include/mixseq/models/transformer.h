// TransformerModel: the encoder-decoder Transformer of Vaswani et al. 2017 as fairseq's
// `transformer` architecture builds it (Ott et al. 2018, "Scaling Neural Machine Translation").
//
//   embeddings  tokens scaled by sqrt(D) plus sinusoidal positions (positions 0, 1, ...;
//               nn/sinusoidal_positional_embedding.h), then dropout. With
//               share_all_embeddings one V x D matrix serves the encoder input, the decoder
//               input and the output projection (mixseq's vocabulary is always joint); else
//               share_decoder_input_output_embed ties the last two.
//   encoder     encoder_layers x (self-attention, FFN) (nn/transformer_encoder_layer.h)
//   decoder     decoder_layers x (causal self-attention, encoder-decoder attention, FFN)
//               (nn/transformer_decoder_layer.h), then the output projection (no bias)
//   norm        post-norm (the paper) or, with normalize_before, pre-norm plus a final
//               LayerNorm on the encoder and the decoder outputs, as fairseq does
//
// Init as fairseq: embeddings normal(0, D^-1/2) with the <pad> row zero (lookups give it no
// gradient), linear layers xavier_uniform with zero biases, LayerNorms 1 and 0.
//
// Padding: source padding is never attended to; the decoder sees no later target position.
// Search: start() runs the encoder and projects its output into each decoder layer's
// encoder-attention keys and values once; step() runs one position of every decoder layer
// against cached self-attention keys and values, so it costs one position, and gives the
// logits forward() gives at that position up to rounding. DecoderStep.attention is the last
// decoder layer's encoder attention averaged over heads.
//
// Quantization (quant/): every linear layer but a tied output projection (it stays fp32, as
// quantizing the shared matrix would change the embedding), and in simulation also the
// embedding table, the attention's products and softmax, the residual adds and the sums of the
// embeddings with the positions ("encoder_positions_add", "decoder_positions_add").
//
// Mixed precision: run under autocast with fp32 parameters; attention softmaxes run in fp32;
// the logits come out in the autocast dtype. Not thread-safe; use one model per thread.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

#include "mixseq/models/model_config.h"
#include "mixseq/models/seq2seq_model.h"
#include "mixseq/nn/multihead_attention.h"
#include "mixseq/nn/quantizable_embedding.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantization_point.h"

namespace mixseq {

// What TransformerModel::step needs of the past. select() keeps rows of every tensor; the
// encoder's keys and values stay one row per sentence, mapped to the beams that read them.
struct TransformerState : IncrementalState {
  std::vector<IncrementalKeyValueCache> self_attention;  // per decoder layer: keys, values of the t fed positions
  std::vector<KeyValueCache> encoder_attention;           // per decoder layer: the encoder output's keys, values
  torch::Tensor pad_mask;                                 // [B, S] bool, true at source padding
  int64_t position = 0;                                   // t, the position of the next token fed

  void select(const torch::Tensor& rows) override;
  void select_within_sources(const torch::Tensor& rows) override;  // the self-attention caches only
};

class TransformerModelImpl : public Seq2SeqModelImpl {
 public:
  // Throws mixseq::Error for invalid config values or vocab_size < 4.
  TransformerModelImpl(const TransformerConfig& config, int64_t vocab_size);

  torch::Tensor forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                        const torch::Tensor& target_input) override;
  std::unique_ptr<IncrementalState> start(const torch::Tensor& source, const torch::Tensor& source_lengths) override;
  DecoderStep step(IncrementalState& state, const torch::Tensor& tokens) override;
  int64_t vocab_size() const override { return vocab_size_; }

  // The matrices in use, [V, D]; the same tensor where they are shared.
  const torch::Tensor& encoder_embedding_weight() const { return encoder_embedding_->weight; }
  const torch::Tensor& decoder_embedding_weight() const { return decoder_embedding_->weight; }
  const torch::Tensor& output_projection_weight() const;

 private:
  TransformerState encode(const torch::Tensor& source, const torch::Tensor& source_lengths);
  // tokens [B, T] at positions state.position.. -> logits [B, T, V], and with need_weights the
  // last layer's encoder attention averaged over heads [B, T, S]; advances state by T positions.
  std::tuple<torch::Tensor, torch::Tensor> decode(const torch::Tensor& tokens, TransformerState& state,
                                                  bool need_weights);
  // tokens [B, T] -> sqrt(D) * embedding + positions first.., after dropout [B, T, D]
  torch::Tensor embed(QuantizableEmbedding& embedding, QuantizationPoint& positions_add, const torch::Tensor& tokens,
                      int64_t first);

  int64_t vocab_size_;
  int64_t embed_dim_;
  bool normalize_before_;
  // Registered as "embedding" when all are shared, else "encoder_embedding" and "decoder_embedding".
  QuantizableEmbedding encoder_embedding_;
  QuantizableEmbedding decoder_embedding_;  // the same module as encoder_embedding_ when shared
  torch::nn::ModuleList encoder_layers_;    // TransformerEncoderLayer
  torch::nn::LayerNorm encoder_layer_norm_;  // pre-norm only, else empty
  torch::nn::ModuleList decoder_layers_;     // TransformerDecoderLayer
  torch::nn::LayerNorm decoder_layer_norm_;  // pre-norm only, else empty
  QuantizableLinear output_projection_;      // tied: a view of decoder_embedding_'s weight, no parameter of its own
  double dropout_;                           // on the embeddings
  QuantizationPoint encoder_positions_add_;  // quantization points of the embeddings' sums with the positions
  QuantizationPoint decoder_positions_add_;
};
TORCH_MODULE(TransformerModel);

}  // namespace mixseq
