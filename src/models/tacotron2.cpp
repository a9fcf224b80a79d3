#include "mixseq/models/tacotron2.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "mixseq/nn/glorot_layers.h"
#include "mixseq/nn/matrix_vector_cell.h"
#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"

namespace mixseq {
namespace {

void check_config(const Tacotron2Config& c) {
  MIXSEQ_CHECK(c.symbols_embedding_dim == c.encoder_embedding_dim, "model.tacotron2.symbols_embedding_dim (",
               c.symbols_embedding_dim, ") must equal model.tacotron2.encoder_embedding_dim (", c.encoder_embedding_dim,
               "): the encoder convolves the embeddings directly");
  MIXSEQ_CHECK(c.encoder_embedding_dim >= 2 && c.encoder_embedding_dim % 2 == 0,
               "model.tacotron2.encoder_embedding_dim must be even (E / 2 LSTM units per direction), not ",
               c.encoder_embedding_dim);
  MIXSEQ_CHECK(c.encoder_kernel_size % 2 == 1, "model.tacotron2.encoder_kernel_size must be odd, not ",
               c.encoder_kernel_size);
  MIXSEQ_CHECK(c.encoder_n_convolutions >= 0, "model.tacotron2.encoder_n_convolutions must be >= 0");
  MIXSEQ_CHECK(c.n_mel_channels >= 1 && c.n_symbols >= 1 && c.attention_rnn_dim >= 1 && c.decoder_rnn_dim >= 1 &&
                   c.prenet_dim >= 1 && c.postnet_embedding_dim >= 1,
               "model.tacotron2: every width must be >= 1");
  MIXSEQ_CHECK(c.max_decoder_steps >= 1, "model.tacotron2.max_decoder_steps must be >= 1, not ", c.max_decoder_steps);
  for (const double p : {c.p_attention_dropout, c.p_decoder_dropout, c.prenet_dropout, c.conv_dropout})
    MIXSEQ_CHECK(p >= 0.0 && p < 1.0, "model.tacotron2: dropout probabilities must be in [0, 1), not ", p);
}

Tacotron2Config with_vocab(Tacotron2Config c, int64_t vocab_size) {
  if (vocab_size > 0) c.n_symbols = vocab_size;
  return c;
}

}  // namespace

Tacotron2ModelImpl::Tacotron2ModelImpl(const Tacotron2Config& config, int64_t vocab_size)
    : config_(with_vocab(config, vocab_size)) {
  const Tacotron2Config& c = config_;
  check_config(c);
  const int64_t E = c.encoder_embedding_dim;
  embedding = register_module("embedding", torch::nn::Embedding(c.n_symbols, c.symbols_embedding_dim));
  {
    torch::NoGradGuard no_grad;
    const double bound = std::sqrt(3.0) * std::sqrt(2.0 / static_cast<double>(c.n_symbols + c.symbols_embedding_dim));
    embedding->weight.uniform_(-bound, bound);
  }
  encoder_convolutions = register_module("encoder_convolutions", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.encoder_n_convolutions; ++i)
    encoder_convolutions->push_back(
        torch::nn::Sequential(glorot_conv1d(E, E, c.encoder_kernel_size, true, "relu"), torch::nn::BatchNorm1d(E)));
  encoder_lstm = register_module(
      "encoder_lstm", torch::nn::LSTM(torch::nn::LSTMOptions(E, E / 2).batch_first(true).bidirectional(true)));
  PrenetOptions prenet_options;
  prenet_options.in_dim = c.n_mel_channels;
  prenet_options.sizes = {c.prenet_dim, c.prenet_dim};
  prenet_options.dropout = c.prenet_dropout;
  prenet = register_module("prenet", Prenet(prenet_options));
  attention_rnn = register_module("attention_rnn", torch::nn::LSTMCell(c.prenet_dim + E, c.attention_rnn_dim));
  LocationSensitiveAttentionOptions attention_options;
  attention_options.query_dim = c.attention_rnn_dim;
  attention_options.memory_dim = E;
  attention_options.attention_dim = c.attention_dim;
  attention_options.location_filters = c.attention_location_n_filters;
  attention_options.location_kernel = c.attention_location_kernel_size;
  attention_layer = register_module("attention_layer", LocationSensitiveAttention(attention_options));
  decoder_rnn = register_module("decoder_rnn", torch::nn::LSTMCell(c.attention_rnn_dim + E, c.decoder_rnn_dim));
  linear_projection = register_module("linear_projection", glorot_linear(c.decoder_rnn_dim + E, c.n_mel_channels));
  gate_layer = register_module("gate_layer", glorot_linear(c.decoder_rnn_dim + E, 1, true, "sigmoid"));
  ConvPostnetOptions postnet_options;
  postnet_options.channels = c.n_mel_channels;
  postnet_options.hidden = c.postnet_embedding_dim;
  postnet_options.kernel_size = c.postnet_kernel_size;
  postnet_options.convolutions = c.postnet_n_convolutions;
  postnet_options.dropout = c.conv_dropout;
  postnet = register_module("postnet", ConvPostnet(postnet_options));
  // models.get_model(uniform_initialize_bn_weight=True): every batch norm's weight uniform in [0, 1).
  torch::NoGradGuard no_grad;
  for (auto& module : modules(/*include_self=*/false))
    if (auto* norm = module->as<torch::nn::BatchNorm1dImpl>()) norm->weight.uniform_(0.0, 1.0);
}

torch::Tensor Tacotron2ModelImpl::encode(const torch::Tensor& text, const torch::Tensor& text_lengths) {
  MIXSEQ_CHECK(text.dim() == 2 && text_lengths.dim() == 1 && text_lengths.size(0) == text.size(0),
               "tacotron2: text must be [B, S] and text_lengths [B], not ", text.sizes(), " and ",
               text_lengths.sizes());
  auto x = embedding(text).transpose(1, 2);  // [B, E, S]
  for (const auto& conv : *encoder_convolutions) {
    x = torch::relu(conv->as<torch::nn::Sequential>()->forward(x));  // [B, E, S]
    if (config_.conv_dropout > 0.0) x = torch::dropout(x, config_.conv_dropout, is_training());
  }
  x = x.transpose(1, 2);  // [B, S, E]
  const auto lengths = text_lengths.to(torch::kCPU, torch::kLong);
  const auto packed = torch::nn::utils::rnn::pack_padded_sequence(x, lengths, /*batch_first=*/true,
                                                                  /*enforce_sorted=*/false);
  const auto output = std::get<0>(encoder_lstm->forward_with_packed_input(packed));
  return std::get<0>(torch::nn::utils::rnn::pad_packed_sequence(output, /*batch_first=*/true, 0.0,
                                                                 /*total_length=*/text.size(1)));  // [B, S, E]
}

Tacotron2DecoderState Tacotron2ModelImpl::start(const torch::Tensor& memory, const torch::Tensor& text_lengths) {
  const int64_t B = memory.size(0), S = memory.size(1);
  const auto options = memory.options();
  Tacotron2DecoderState s;
  s.attention_hidden = torch::zeros({B, config_.attention_rnn_dim}, options);
  s.attention_cell = torch::zeros({B, config_.attention_rnn_dim}, options);
  s.decoder_hidden = torch::zeros({B, config_.decoder_rnn_dim}, options);
  s.decoder_cell = torch::zeros({B, config_.decoder_rnn_dim}, options);
  s.attention_weights = torch::zeros({B, S}, options);
  s.attention_weights_cum = torch::zeros({B, S}, options);
  s.attention_context = torch::zeros({B, config_.encoder_embedding_dim}, options);
  s.memory = memory;
  s.processed_memory = attention_layer->process_memory(memory);  // [B, S, A]
  s.pad_mask = torch::arange(S, text_lengths.options().dtype(torch::kLong)).unsqueeze(0) >=
               text_lengths.to(torch::kLong).unsqueeze(1);  // [B, S]
  s.attention_lstm.emplace(attention_rnn->weight_ih, attention_rnn->weight_hh, attention_rnn->bias_ih,
                           attention_rnn->bias_hh);
  s.decoder_lstm.emplace(decoder_rnn->weight_ih, decoder_rnn->weight_hh, decoder_rnn->bias_ih, decoder_rnn->bias_hh);
  return s;
}

// Their Decoder.decode, up to the projections.
std::pair<torch::Tensor, torch::Tensor> Tacotron2ModelImpl::decode_hidden(const torch::Tensor& prenet_output,
                                                                          Tacotron2DecoderState& s) {
  const auto cell_input = torch::cat({prenet_output, s.attention_context}, -1);  // [B, P + E]
  std::tie(s.attention_hidden, s.attention_cell) =
      (*s.attention_lstm)(cell_input, s.attention_hidden, s.attention_cell);  // [B, Ha] each
  if (config_.p_attention_dropout > 0.0)
    s.attention_hidden = torch::dropout(s.attention_hidden, config_.p_attention_dropout, is_training());
  const auto weights_cat = torch::stack({s.attention_weights, s.attention_weights_cum}, 1);  // [B, 2, S]
  auto [context, weights] =
      attention_layer(s.attention_hidden, s.memory, s.processed_memory, weights_cat, s.pad_mask);  // [B, E], [B, S]
  s.attention_weights = weights;
  s.attention_weights_cum = s.attention_weights_cum + weights;
  s.attention_context = context;
  const auto decoder_input = torch::cat({s.attention_hidden, context}, -1);  // [B, Ha + E]
  std::tie(s.decoder_hidden, s.decoder_cell) =
      (*s.decoder_lstm)(decoder_input, s.decoder_hidden, s.decoder_cell);  // [B, Hd] each
  if (config_.p_decoder_dropout > 0.0)
    s.decoder_hidden = torch::dropout(s.decoder_hidden, config_.p_decoder_dropout, is_training());
  return {torch::cat({s.decoder_hidden, context}, 1), weights};  // [B, Hd + E], [B, S]
}

// Their Decoder.decode. (Batch-1 synthesis: gemv instead of gemm, nn/matrix_vector_cell.h.)
Tacotron2Step Tacotron2ModelImpl::decode(const torch::Tensor& prenet_output, Tacotron2DecoderState& state) {
  const auto [hidden_context, weights] = decode_hidden(prenet_output, state);
  return {matrix_vector_linear(hidden_context, linear_projection->weight, linear_projection->bias),
          matrix_vector_linear(hidden_context, gate_layer->weight, gate_layer->bias).squeeze(1), weights};
}

Tacotron2Step Tacotron2ModelImpl::step(const torch::Tensor& previous_frame, Tacotron2DecoderState& state) {
  return decode(prenet(previous_frame), state);  // [B, F] -> [B, P] -> step
}

torch::Tensor Tacotron2ModelImpl::postnet_frames(const torch::Tensor& frames) {
  return frames + postnet(frames);  // [B, F, T]
}

SynthesisOutput Tacotron2ModelImpl::forward(const torch::Tensor& text, const torch::Tensor& text_lengths,
                                            const torch::Tensor& frames) {
  MIXSEQ_CHECK(frames.dim() == 3 && frames.size(0) == text.size(0) && frames.size(1) == config_.n_mel_channels,
               "tacotron2: target frames must be [B = ", text.size(0), ", F = ", config_.n_mel_channels, ", T], not ",
               frames.sizes());
  const int64_t T = frames.size(2);
  const auto memory = encode(text, text_lengths);                                  // [B, S, E]
  auto inputs = frames.permute({2, 0, 1});                                          // [T, B, F]
  inputs = torch::cat({torch::zeros_like(inputs.slice(0, 0, 1)), inputs.slice(0, 0, T - 1)});  // [T, B, F] go frame first
  const auto prenet_outputs = prenet(inputs);                                       // [T, B, P]
  auto state = start(memory, text_lengths);
  std::vector<torch::Tensor> hidden_contexts, alignments;
  hidden_contexts.reserve(static_cast<size_t>(T));
  alignments.reserve(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    auto [hidden_context, weights] = decode_hidden(prenet_outputs[t], state);
    hidden_contexts.push_back(hidden_context);
    alignments.push_back(weights);
  }
  // The projections of every step at once: frames in teacher forcing do not feed back.
  const auto hidden = torch::stack(hidden_contexts, 1);  // [B, T, Hd + E]
  SynthesisOutput output;
  output.frames = linear_projection(hidden).transpose(1, 2).contiguous();  // [B, F, T]
  output.gate_logits = gate_layer(hidden).squeeze(2);                      // [B, T]
  output.alignments = torch::stack(alignments, 1);                         // [B, T, S]
  output.frames_postnet = postnet_frames(output.frames);                   // [B, F, T]
  return output;
}

// Their Decoder.infer: an utterance's length counts the steps before its gate first passes the
// threshold; the loop ends when all have (early_stop) or at max_steps.
Synthesis Tacotron2ModelImpl::infer(const torch::Tensor& text, const torch::Tensor& text_lengths,
                                    const SynthesisOptions& options) {
  MIXSEQ_CHECK(options.max_steps >= 1, "synthesis: max_steps must be >= 1, not ", options.max_steps);
  const auto memory = encode(text, text_lengths);  // [B, S, E]
  const int64_t B = memory.size(0);
  auto state = start(memory, text_lengths);
  auto frame = torch::zeros({B, config_.n_mel_channels}, memory.options());  // the go frame
  auto lengths = torch::zeros({B}, torch::kLong);
  auto not_finished = torch::ones({B}, torch::kLong);
  std::vector<torch::Tensor> out_frames, alignments;
  const bool on_cpu = memory.device().is_cpu();
  for (int64_t t = 0; t < options.max_steps; ++t) {
    if (on_cpu) adapt_threads_to_load();  // a busy core is given up between steps (docs/threads.md)
    auto out = step(frame, state);
    out_frames.push_back(out.frame);
    alignments.push_back(out.weights);
    const auto going_on = (torch::sigmoid(out.gate) <= options.gate_threshold).to(torch::kCPU, torch::kLong);  // [B]
    not_finished = not_finished * going_on;
    lengths = lengths + not_finished;
    if (options.early_stop && not_finished.sum().item<int64_t>() == 0) break;
    frame = out.frame;
  }
  Synthesis synthesis;
  synthesis.frames = postnet_frames(torch::stack(out_frames, 2));  // [B, F, T]
  synthesis.lengths = lengths;
  synthesis.alignments = torch::stack(alignments, 1);             // [B, T, S]
  return synthesis;
}

void Tacotron2ModelImpl::initialize_output_bias(const torch::Tensor& frame_mean, double stop_logit) {
  MIXSEQ_CHECK(frame_mean.dim() == 1 && frame_mean.size(0) == config_.n_mel_channels, "tacotron2: the frame mean must be [",
               config_.n_mel_channels, "], not ", frame_mean.sizes());
  torch::NoGradGuard no_grad;
  linear_projection->bias.copy_(frame_mean);
  gate_layer->bias.fill_(stop_logit);
}

}  // namespace mixseq
