#include "mixseq/models/gnmt.h"

#include <ATen/ATen.h>

#include <utility>

#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/padding_mask.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Checks the whole config before any module is built (a bad size would otherwise surface as
// a LibTorch shape error); returns vocab_size.
int64_t checked_vocab_size(const GnmtConfig& config, int64_t vocab_size) {
  MIXSEQ_CHECK(config.hidden_size > 0, "model.gnmt.hidden_size must be positive, got ", config.hidden_size);
  MIXSEQ_CHECK(config.num_layers >= 2, "model.gnmt.num_layers must be at least 2 (encoder layer 1 is bidirectional, ",
               "layer 2 brings it back to hidden_size), got ", config.num_layers);
  MIXSEQ_CHECK(config.dropout >= 0.0 && config.dropout < 1.0, "model.gnmt.dropout must be in [0, 1), got ",
               config.dropout, "; 0 disables dropout");
  MIXSEQ_CHECK(config.init_range > 0.0, "model.gnmt.init_range must be positive, got ", config.init_range,
               "; the reference uses 0.1");
  MIXSEQ_CHECK(vocab_size >= kSpecialSymbolCount, "GNMT vocabulary size must be at least ", kSpecialSymbolCount,
               " (<pad> <unk> <s> </s>), got ", vocab_size);
  return vocab_size;
}

QuantizableEmbedding make_embedding(int64_t vocab_size, const GnmtConfig& config) {
  // padding_idx keeps <pad>'s row out of the gradient. NVIDIA's GNMT overwrites the row's
  // initial zeros with the uniform init, as here; nothing reads it (the encoder is packed,
  // padded target positions are not scored).
  QuantizableEmbedding embedding(torch::nn::EmbeddingOptions(vocab_size, config.hidden_size).padding_idx(kPadId));
  torch::NoGradGuard no_grad;
  embedding->weight.uniform_(-config.init_range, config.init_range);
  return embedding;
}

QuantizableLstm make_lstm(int64_t input_size, const GnmtConfig& config) {
  QuantizableLstm lstm(input_size, config.hidden_size);
  init_lstm_uniform_(*lstm, config.init_range);
  return lstm;
}

ResidualLstmStackOptions stack_options(int64_t input_size, int64_t extra_input_size, const GnmtConfig& config) {
  ResidualLstmStackOptions options;
  options.input_size = input_size;
  options.hidden_size = config.hidden_size;
  options.num_layers = config.num_layers - 1;
  options.extra_input_size = extra_input_size;
  options.dropout = config.dropout;
  options.init_range = config.init_range;
  return options;
}

QuantizableLinear make_classifier(int64_t vocab_size, const GnmtConfig& config) {
  QuantizableLinear linear(torch::nn::LinearOptions(config.hidden_size, vocab_size).bias(true));
  torch::NoGradGuard no_grad;
  linear->weight.uniform_(-config.init_range, config.init_range);
  linear->bias.uniform_(-config.init_range, config.init_range);
  return linear;
}

}  // namespace

void GnmtState::select_within_sources(const torch::Tensor& rows) {
  const auto index = rows.to(encoder_output.device());  // [B']
  const auto select_lstm_state = [&](LstmState& state) {
    state = {std::get<0>(state).index_select(1, index), std::get<1>(state).index_select(1, index)};  // [1, B', H]
  };
  select_lstm_state(decoder_lstm_state);
  for (auto& state : decoder_layers_states) select_lstm_state(state);
}

void GnmtState::select(const torch::Tensor& rows) {
  select_within_sources(rows);
  const auto sources = (rows_per_source == 1 ? rows : at::div(rows, rows_per_source, "floor")).to(at::kLong);  // [B']
  const auto keep_entries = [&](const torch::Tensor& entries) {
    const auto index = entries.to(encoder_output.device());
    encoder_output = encoder_output.index_select(0, index);  // [n, S, H]
    projected_keys = projected_keys.index_select(0, index);  // [n, S, H]
    pad_mask = pad_mask.index_select(0, index);              // [n, S]
  };
  const int64_t n = sources.numel();
  if (sources.device().is_cpu() && n > 0) {
    // Runs of equal length, each of one source: keep one entry per run.
    const auto host = sources.contiguous();
    const int64_t* source = host.data_ptr<int64_t>();
    int64_t run = 1;
    while (run < n && source[run] == source[0]) ++run;
    bool runs = n % run == 0;
    for (int64_t i = 0; runs && i < n; ++i) runs = source[i] == source[i - i % run];
    if (runs) {
      const auto entries = host.slice(0, 0, n, run);  // [n / run]
      if (entries.numel() != encoder_output.size(0) || !entries.equal(at::arange(entries.numel(), entries.options())))
        keep_entries(entries);
      rows_per_source = run;
      return;
    }
  }
  keep_entries(sources);  // one entry per row
  rows_per_source = 1;
}

GnmtModelImpl::GnmtModelImpl(const GnmtConfig& config, int64_t vocab_size)
    : vocab_size_(checked_vocab_size(config, vocab_size)),
      hidden_size_(config.hidden_size),
      source_embedding_(register_module(config.share_embeddings ? "embedding" : "source_embedding",
                                        make_embedding(vocab_size, config))),
      target_embedding_(config.share_embeddings
                            ? source_embedding_
                            : register_module("target_embedding", make_embedding(vocab_size, config))),
      encoder_bi_lstm_(register_module(
          "encoder_bi_lstm",
          BidirectionalLstm(BidirectionalLstmOptions{/*input_size=*/config.hidden_size,
                                                     /*hidden_size=*/config.hidden_size, config.init_range}))),
      encoder_layers_(register_module("encoder_layers",
                                      ResidualLstmStack(stack_options(2 * config.hidden_size, 0, config)))),
      decoder_lstm_(register_module("decoder_lstm", make_lstm(config.hidden_size, config))),
      attention_(register_module("attention", BahdanauAttention(BahdanauAttentionOptions{
                                                  /*query_size=*/config.hidden_size, /*key_size=*/config.hidden_size,
                                                  /*num_units=*/config.hidden_size, config.init_range}))),
      decoder_layers_(register_module(
          "decoder_layers", ResidualLstmStack(stack_options(config.hidden_size, config.hidden_size, config)))),
      classifier_(register_module("classifier", make_classifier(vocab_size, config))),
      dropout_(config.dropout) {}

GnmtState GnmtModelImpl::encode(const torch::Tensor& source, const torch::Tensor& source_lengths) {
  MIXSEQ_CHECK(source.dim() == 2 && source_lengths.dim() == 1 && source_lengths.size(0) == source.size(0),
               "GnmtModel: source must be [B, S] and source_lengths [B], got ", source.sizes(), " and ",
               source_lengths.sizes());
  GnmtState state;
  auto x = hashed_dropout(source_embedding_(source), dropout_, is_training());                        // [B, S, H]
  x = encoder_bi_lstm_(x, source_lengths);                             // [B, S, 2H]
  state.encoder_output = std::get<0>(encoder_layers_->forward(x));     // [B, S, H]
  state.projected_keys = attention_->project_keys(state.encoder_output);  // [B, S, H]
  state.pad_mask = padding_mask(source_lengths.to(source.device()), source.size(1));  // [B, S]
  // The decoder starts from zero states, as in the reference (no bridge from the encoder).
  const auto zeros = at::zeros({1, source.size(0), hidden_size_}, state.encoder_output.options());  // [1, B, H]
  state.decoder_lstm_state = {zeros, zeros};
  state.decoder_layers_states.assign(decoder_layers_->num_layers(), {zeros, zeros});
  return state;
}

std::tuple<torch::Tensor, torch::Tensor> GnmtModelImpl::decode(const torch::Tensor& tokens, GnmtState& state) {
  const auto x = hashed_dropout(target_embedding_(tokens), dropout_, is_training());                          // [B, T, H]
  auto [query, lstm_state] = decoder_lstm_->forward(x, state.decoder_lstm_state);  // [B, T, H]
  // A source's r rows attend as r T queries of its one entry (GnmtState).
  const int64_t r = state.rows_per_source, B = query.size(0), T = query.size(1);
  const auto queries = r == 1 ? query : query.reshape({B / r, r * T, query.size(2)});  // [B / r, r T, H]
  auto [context, weights] =
      attention_(queries, state.encoder_output, state.projected_keys, state.pad_mask);  // [B / r, r T, H], [.., S]
  if (r > 1) {
    context = context.reshape({B, T, context.size(2)});  // [B, T, H]
    weights = weights.reshape({B, T, weights.size(2)});  // [B, T, S]
  }
  auto [y, layers_states] = decoder_layers_->forward(query, context, state.decoder_layers_states);  // [B, T, H]
  state.decoder_lstm_state = std::move(lstm_state);
  state.decoder_layers_states = std::move(layers_states);
  return {classifier_(y), weights};  // [B, T, V], [B, T, S]
}

torch::Tensor GnmtModelImpl::forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                                     const torch::Tensor& target_input) {
  auto state = encode(source, source_lengths);
  return std::get<0>(decode(target_input, state));  // [B, T, V]
}

std::unique_ptr<IncrementalState> GnmtModelImpl::start(const torch::Tensor& source,
                                                       const torch::Tensor& source_lengths) {
  return std::make_unique<GnmtState>(encode(source, source_lengths));
}

DecoderStep GnmtModelImpl::step(IncrementalState& state, const torch::Tensor& tokens) {
  auto* gnmt_state = dynamic_cast<GnmtState*>(&state);
  MIXSEQ_CHECK(gnmt_state != nullptr, "GnmtModel::step needs the state GnmtModel::start returned");
  auto [logits, weights] = decode(tokens.unsqueeze(1), *gnmt_state);  // [B, 1, V], [B, 1, S]
  return {logits.squeeze(1), weights.squeeze(1)};                      // [B, V], [B, S]
}

}  // namespace mixseq
