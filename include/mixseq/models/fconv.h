// FconvModel: ConvS2S, the convolutional sequence-to-sequence model of Gehring et al. 2017
// ("Convolutional Sequence to Sequence Learning") as fairseq's `fconv` builds it
// (fairseq/models/fconv.py), configured by FconvConfig (models/model_config.h).
//
//   embeddings  source and target tokens each with their own V x E table plus a learned
//               position table (fairseq's LearnedPositionalEmbedding: position p of a sentence's
//               p-th non-padding token, row 0 = <pad>'s, zero and without gradient), then dropout
//   encoder     a weight-normalised linear E -> C, then one GluConvolution (nn/glu_convolution.h)
//               per layer spec, each on its masked (padding = 0), dropped-out input, centred
//               ("same" length), plus a residual from `residual` layers back (through a linear
//               projection where the widths differ) scaled by sqrt(0.5); a linear back to E.
//               Its output z (padding zeroed) is attention's keys, (z + embedding) sqrt(0.5) its
//               values; z's gradient is scaled by 1 / (2 * attention layers) (§3.4).
//   decoder     the same for the target, with causal convolutions (each position sees only
//               itself and the K - 1 before it), and after each convolution with attention
//               (multi-step attention, §3.3): d = (W h + target embedding) sqrt(0.5), a softmax
//               over d . z_j (source padding excluded), c = sum_j a_j (z_j + e_j) scaled by
//               sqrt(source length), h <- (W' c + h) sqrt(0.5); then the residual; finally
//               linear C -> out_embed_dim, dropout, linear -> V (or the target embedding's
//               matrix plus a bias with share_input_output_embed)
//   shared      share_all_embeddings (OpenSeq2Seq's shared_embed): one token table and one
//               position table serve both sides, and the logits are the output times the token
//               table, without a bias (a joint vocabulary, one width for all three embed dims)
//
// Every linear layer and convolution is weight-normalised (nn/weight_norm_linear.h), with
// fairseq's initialisation: embeddings and positions N(0, 0.1), linear weights
// N(0, sqrt((1 - p) / in)) where dropout p precedes them, convolutions N(0, sqrt(4 (1 - p) / (K in))),
// biases 0. fconv_iwslt_de_en at vocabulary 2000 has 5,484,448 parameters, as fairseq's.
//
// Search: start() runs the encoder; step() feeds one token through each decoder layer, which
// keeps its last K - 1 inputs (FconvState::conv_inputs), so a step costs one column of every
// convolution, not the prefix. forward() runs the same code with empty (zero) histories, so
// step() gives forward()'s logits at each position up to rounding. DecoderStep.attention is the
// mean of the attention layers' weights (fairseq divides their sum by all decoder layers, so its
// rows sum to less than 1 where a layer has no attention).
//
// tests/unit/models/test_fconv.cpp checks logits, step-by-step attention and every parameter's
// gradient against fairseq's own FConvEncoder/FConvDecoder (tests/data/fconv/make_golden.py).
//
// Mixed precision: under autocast with fp32 parameters, convolutions run in the dtype of their
// input, attention softmaxes in fp32. Quantization (quant/): every convolution and linear layer
// is quantizable through its "product" view of the weight g V / ||V|| (nn/glu_convolution.h,
// nn/weight_norm_linear.h), e.g. "decoder_layers.0.conv.product", "decoder_fc3.product"; a
// shared output embedding (share_input_output_embed, share_all_embeddings) stays float.
// Not thread-safe; use one model per thread.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "mixseq/models/model_config.h"
#include "mixseq/models/seq2seq_model.h"
#include "mixseq/nn/weight_norm_linear.h"

namespace mixseq {

// One convolution of a layer list: fairseq's (out_channels, kernel_size, residual).
struct FconvLayerSpec {
  int64_t channels = 0;      // C: width after the GLU
  int64_t kernel_width = 0;  // K
  int64_t residual = 1;      // the residual is the output of this many layers back (1 = this layer's input); 0 = none
};

// Parses fairseq's layer expression ("[(256, 3)] * 4", "[(512, 3)] * 9 + [(1024, 3)] * 4 +
// [(2048, 1)] * 2"); throws mixseq::Error naming `key` and the position for anything else.
std::vector<FconvLayerSpec> parse_fconv_layers(const std::string& text, const std::string& key);
// "True", "False" or a list "[True, False, ...]" of `layers` entries -> one flag per layer.
std::vector<bool> parse_fconv_attention(const std::string& text, size_t layers, const std::string& key);

// What FconvModel::step needs of the past. select() keeps rows of every tensor.
struct FconvState : IncrementalState {
  torch::Tensor encoder_keys;     // [B, E, S]: z, transposed once for the attention products
  torch::Tensor encoder_values;   // [B, S, E]: (z + source embedding) sqrt(0.5)
  torch::Tensor pad_mask;         // [B, S] bool, true at source padding
  torch::Tensor attention_scale;  // [B, 1, 1]: sqrt(source length)
  std::vector<torch::Tensor> conv_inputs;  // per decoder layer: its last K - 1 inputs, [K - 1, B, C_in]
  int64_t position = 0;                    // target positions fed so far

  void select(const torch::Tensor& rows) override;
  void select_within_sources(const torch::Tensor& rows) override;  // the convolution histories only
};

class FconvModelImpl : public Seq2SeqModelImpl {
 public:
  // Throws mixseq::Error naming the key for invalid config values, or for vocab_size < 4.
  FconvModelImpl(const FconvConfig& config, int64_t vocab_size);

  torch::Tensor forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                        const torch::Tensor& target_input) override;
  std::unique_ptr<IncrementalState> start(const torch::Tensor& source, const torch::Tensor& source_lengths) override;
  DecoderStep step(IncrementalState& state, const torch::Tensor& tokens) override;
  int64_t vocab_size() const override { return vocab_size_; }

 private:
  FconvState encode(const torch::Tensor& source, const torch::Tensor& source_lengths);
  // tokens [B, T] at positions state.position + 1.. -> logits [B, T, V], and with need_weights the
  // attention layers' mean weights [B, T, S]; advances state by T positions.
  std::tuple<torch::Tensor, torch::Tensor> decode(const torch::Tensor& tokens, FconvState& state, bool need_weights);

  int64_t vocab_size_;
  int64_t max_positions_;
  double dropout_;
  int64_t attention_layers_ = 0;
  torch::nn::Embedding encoder_embedding_{nullptr};
  torch::nn::Embedding encoder_positions_{nullptr};
  WeightNormLinear encoder_fc1_{nullptr};
  torch::nn::ModuleList encoder_layers_{nullptr};  // FconvEncoderLayer (src/models/fconv.cpp)
  WeightNormLinear encoder_fc2_{nullptr};
  torch::nn::Embedding decoder_embedding_{nullptr};
  torch::nn::Embedding decoder_positions_{nullptr};
  WeightNormLinear decoder_fc1_{nullptr};
  torch::nn::ModuleList decoder_layers_{nullptr};  // FconvDecoderLayer (src/models/fconv.cpp)
  WeightNormLinear decoder_fc2_{nullptr};
  WeightNormLinear decoder_fc3_{nullptr};  // the output projection; empty with share_input_output_embed
  torch::Tensor output_bias_;     // share_input_output_embed only: [V] (undefined with share_all_embeddings)
};
TORCH_MODULE(FconvModel);

}  // namespace mixseq
