#include "mixseq/models/transformer.h"

#include <ATen/ATen.h>
#include <torch/nn/init.h>

#include <cmath>

#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/padding_mask.h"
#include "mixseq/nn/sinusoidal_positional_embedding.h"
#include "mixseq/nn/transformer_decoder_layer.h"
#include "mixseq/nn/transformer_encoder_layer.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

void check_dropout(const char* key, double value) {
  MIXSEQ_CHECK(value >= 0.0 && value < 1.0, "model.transformer.", key, " must be in [0, 1), got ", value,
               "; 0 disables it");
}

// Checks the whole config before any module is built (a bad size would otherwise surface as
// a LibTorch shape error); returns vocab_size.
int64_t checked_vocab_size(const TransformerConfig& config, int64_t vocab_size) {
  MIXSEQ_CHECK(config.heads > 0, "model.transformer.heads must be positive, got ", config.heads);
  MIXSEQ_CHECK(config.embed_dim > 0 && config.embed_dim % config.heads == 0, "model.transformer.embed_dim (",
               config.embed_dim, ") must be a positive multiple of model.transformer.heads (", config.heads, ")");
  MIXSEQ_CHECK(config.embed_dim % 2 == 0 && config.embed_dim >= 4, "model.transformer.embed_dim must be even and ",
               "at least 4 (half of it holds the sines of the positional embeddings, half the cosines), got ",
               config.embed_dim);
  MIXSEQ_CHECK(config.ffn_dim > 0, "model.transformer.ffn_dim must be positive, got ", config.ffn_dim);
  MIXSEQ_CHECK(config.encoder_layers >= 1, "model.transformer.encoder_layers must be at least 1, got ",
               config.encoder_layers);
  MIXSEQ_CHECK(config.decoder_layers >= 1, "model.transformer.decoder_layers must be at least 1, got ",
               config.decoder_layers);
  check_dropout("dropout", config.dropout);
  check_dropout("attention_dropout", config.attention_dropout);
  check_dropout("activation_dropout", config.activation_dropout);
  MIXSEQ_CHECK(vocab_size >= kSpecialSymbolCount, "Transformer vocabulary size must be at least ",
               kSpecialSymbolCount, " (<pad> <unk> <s> </s>), got ", vocab_size);
  return vocab_size;
}

TransformerLayerOptions layer_options(const TransformerConfig& config) {
  TransformerLayerOptions options;
  options.embed_dim = config.embed_dim;
  options.ffn_dim = config.ffn_dim;
  options.num_heads = config.heads;
  options.dropout = config.dropout;
  options.attention_dropout = config.attention_dropout;
  options.activation_dropout = config.activation_dropout;
  options.normalize_before = config.normalize_before;
  return options;
}

// fairseq's Embedding(): normal(0, D^-1/2), so that after the sqrt(D) scaling the inputs have
// unit variance, like the positional embeddings they are added to.
QuantizableEmbedding make_embedding(int64_t vocab_size, int64_t embed_dim) {
  QuantizableEmbedding embedding(torch::nn::EmbeddingOptions(vocab_size, embed_dim).padding_idx(kPadId));
  torch::NoGradGuard no_grad;
  embedding->weight.normal_(0.0, std::pow(static_cast<double>(embed_dim), -0.5));
  embedding->weight[kPadId].zero_();
  return embedding;
}

torch::nn::ModuleList make_encoder_layers(const TransformerConfig& config) {
  torch::nn::ModuleList layers;
  for (int64_t i = 0; i < config.encoder_layers; ++i) layers->push_back(TransformerEncoderLayer(layer_options(config)));
  return layers;
}

torch::nn::ModuleList make_decoder_layers(const TransformerConfig& config) {
  torch::nn::ModuleList layers;
  for (int64_t i = 0; i < config.decoder_layers; ++i) layers->push_back(TransformerDecoderLayer(layer_options(config)));
  return layers;
}

torch::nn::LayerNorm make_layer_norm(const TransformerConfig& config) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.embed_dim}));
}

// fairseq's untied output projection: no bias, normal(0, D^-1/2) like an embedding.
QuantizableLinear make_output_projection(int64_t vocab_size, int64_t embed_dim) {
  QuantizableLinear linear(torch::nn::LinearOptions(embed_dim, vocab_size).bias(false));
  torch::NoGradGuard no_grad;
  linear->weight.normal_(0.0, std::pow(static_cast<double>(embed_dim), -0.5));
  return linear;
}

}  // namespace

namespace {

template <typename Cache>
void select_caches(std::vector<Cache>& caches, const torch::Tensor& index) {
  for (auto& cache : caches) cache.select(index);
}

}  // namespace

void TransformerState::select_within_sources(const torch::Tensor& rows) {
  select_caches(self_attention, rows.to(pad_mask.device()));
}

void TransformerState::select(const torch::Tensor& rows) {
  const auto index = rows.to(pad_mask.device());  // [B']
  select_caches(self_attention, index);
  select_caches(encoder_attention, index);
  pad_mask = pad_mask.index_select(0, index);  // [B', S]
}

TransformerModelImpl::TransformerModelImpl(const TransformerConfig& config, int64_t vocab_size)
    : vocab_size_(checked_vocab_size(config, vocab_size)),
      embed_dim_(config.embed_dim),
      normalize_before_(config.normalize_before),
      encoder_embedding_(register_module(config.share_all_embeddings ? "embedding" : "encoder_embedding",
                                         make_embedding(vocab_size, config.embed_dim))),
      decoder_embedding_(config.share_all_embeddings
                             ? encoder_embedding_
                             : register_module("decoder_embedding", make_embedding(vocab_size, config.embed_dim))),
      encoder_layers_(register_module("encoder_layers", make_encoder_layers(config))),
      encoder_layer_norm_(config.normalize_before
                              ? register_module("encoder_layer_norm", make_layer_norm(config))
                              : torch::nn::LayerNorm(nullptr)),
      decoder_layers_(register_module("decoder_layers", make_decoder_layers(config))),
      decoder_layer_norm_(config.normalize_before
                              ? register_module("decoder_layer_norm", make_layer_norm(config))
                              : torch::nn::LayerNorm(nullptr)),
      // Tied: a view of the decoder embedding that registers no parameter (the checkpoint keys stay
      // those of the embedding), so that quantization can give it its own int8 copy while the
      // embedding lookups stay in float.
      output_projection_(register_module(
          "output_projection", config.share_all_embeddings || config.share_decoder_input_output_embed
                                   ? QuantizableLinear(decoder_embedding_->weight, /*shared_bias=*/torch::Tensor())
                                   : make_output_projection(vocab_size, config.embed_dim))),
      dropout_(config.dropout),
      encoder_positions_add_(register_module("encoder_positions_add", QuantizationPoint())),
      decoder_positions_add_(register_module("decoder_positions_add", QuantizationPoint())) {}

const torch::Tensor& TransformerModelImpl::output_projection_weight() const { return output_projection_->weight; }

torch::Tensor TransformerModelImpl::embed(QuantizableEmbedding& embedding, QuantizationPoint& positions_add,
                                          const torch::Tensor& tokens, int64_t first) {
  // Vaswani et al. 2017, §3.4: embeddings are multiplied by sqrt(D).
  const auto x = embedding(tokens) * std::sqrt(static_cast<double>(embed_dim_));                  // [B, T, D]
  const auto positions = sinusoidal_positional_embedding(first, tokens.size(1), embed_dim_, tokens.device());  // [T, D]
  return hashed_dropout(positions_add(x + positions.unsqueeze(0)), dropout_, is_training());  // [B, T, D]
}

TransformerState TransformerModelImpl::encode(const torch::Tensor& source, const torch::Tensor& source_lengths) {
  MIXSEQ_CHECK(source.dim() == 2 && source_lengths.dim() == 1 && source_lengths.size(0) == source.size(0),
               "TransformerModel: source must be [B, S] and source_lengths [B], got ", source.sizes(), " and ",
               source_lengths.sizes());
  TransformerState state;
  state.pad_mask = padding_mask(source_lengths.to(source.device()), source.size(1));  // [B, S]
  auto x = embed(encoder_embedding_, encoder_positions_add_, source, 0);               // [B, S, D]
  for (size_t i = 0; i < encoder_layers_->size(); ++i)
    x = encoder_layers_->at<TransformerEncoderLayerImpl>(i).forward(x, state.pad_mask);  // [B, S, D]
  const auto encoder_output = normalize_before_ ? encoder_layer_norm_(x) : x;           // [B, S, D]
  for (size_t i = 0; i < decoder_layers_->size(); ++i) {
    state.encoder_attention.push_back(
        decoder_layers_->at<TransformerDecoderLayerImpl>(i).project_encoder_output(encoder_output));
  }
  state.self_attention.resize(decoder_layers_->size());
  return state;
}

std::tuple<torch::Tensor, torch::Tensor> TransformerModelImpl::decode(const torch::Tensor& tokens,
                                                                      TransformerState& state, bool need_weights) {
  auto x = embed(decoder_embedding_, decoder_positions_add_, tokens, state.position);  // [B, T, D]
  torch::Tensor weights;                                                               // [B, H, T, S]
  const size_t last = decoder_layers_->size() - 1;
  for (size_t i = 0; i <= last; ++i) {
    std::tie(x, weights) = decoder_layers_->at<TransformerDecoderLayerImpl>(i).forward(
        x, state.self_attention[i], state.encoder_attention[i], state.pad_mask, need_weights && i == last);
  }
  if (normalize_before_) x = decoder_layer_norm_(x);
  state.position += tokens.size(1);
  const auto logits = output_projection_(x);  // [B, T, V]
  return {logits, need_weights ? weights.mean(1) : weights};      // [B, T, V], [B, T, S]
}

torch::Tensor TransformerModelImpl::forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                                            const torch::Tensor& target_input) {
  auto state = encode(source, source_lengths);
  return std::get<0>(decode(target_input, state, /*need_weights=*/false));  // [B, T, V]
}

std::unique_ptr<IncrementalState> TransformerModelImpl::start(const torch::Tensor& source,
                                                              const torch::Tensor& source_lengths) {
  return std::make_unique<TransformerState>(encode(source, source_lengths));
}

DecoderStep TransformerModelImpl::step(IncrementalState& state, const torch::Tensor& tokens) {
  auto* transformer_state = dynamic_cast<TransformerState*>(&state);
  MIXSEQ_CHECK(transformer_state != nullptr, "TransformerModel::step needs the state TransformerModel::start returned");
  // [B, 1, V], [B, 1, S]
  auto [logits, weights] = decode(tokens.unsqueeze(1), *transformer_state, state.report_attention);
  return {logits.squeeze(1), weights.defined() ? weights.squeeze(1) : weights};  // [B, V], [B, S]
}

}  // namespace mixseq
