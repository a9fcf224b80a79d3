// Tacotron 2 (Shen et al. 2018) exactly as NVIDIA DeepLearningExamples builds it
// (PyTorch/SpeechSynthesis/Tacotron2, tacotron2/model.py; the fields are its arg_parser.py flags,
// with their defaults):
//   encoder: embedding [B, S, E] -> encoder_n_convolutions x (conv k5 -> batch norm -> ReLU ->
//            dropout 0.5) -> bidirectional LSTM of E / 2 per direction             [B, S, E]
//   decoder, one step per frame: prenet(previous frame) (dropout on at inference) ->
//            attention LSTM (input: prenet output and the previous context) -> dropout ->
//            location-sensitive attention over the encoder output -> decoder LSTM (input: the
//            attention LSTM's output and the context) -> dropout -> [decoder LSTM output; context]
//            -> linear projection to F frame bins, and to one stop-token logit (the "gate")
//   postnet: 5 convolutions with batch norm (tanh but the last) predicting a residual on the frames.
// Initialisation as theirs: LinearNorm / ConvNorm's xavier_uniform with gains (nn/glorot_layers.h),
// the embedding uniform in +-sqrt(3) sqrt(2 / (symbols + E)), batch-norm weights uniform in [0, 1)
// (their models.get_model(uniform_initialize_bn_weight=True), as train.py calls it), LSTMs and
// biases LibTorch's defaults (PyTorch's). Parameters are listed in their order with the same shapes.
// One frame per step (their n_frames_per_step, which supports only 1); no mask_padding (their default).
//
// The decoder is exposed a step at a time (start, step) for incremental synthesis; forward and infer
// are written with them. Dimension alphabet as models/speech_synthesizer.h, with P prenet width,
// E encoder width, Ha / Hd attention / decoder LSTM widths.
#pragma once

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/rnn.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "mixseq/models/speech_synthesizer.h"
#include "mixseq/nn/conv_postnet.h"
#include "mixseq/nn/location_sensitive_attention.h"
#include "mixseq/nn/prenet.h"
#include "mixseq/nn/recurrent_linear.h"
#include "mixseq/util/config.h"

namespace mixseq {

struct Tacotron2Config {
  int64_t n_mel_channels = 80;                  // F: bins of each frame
  int64_t n_symbols = 148;                      // input symbols (their English table: text/synthesis_symbols.h)
  int64_t symbols_embedding_dim = 512;          // E: embedding width (= encoder_embedding_dim)
  int64_t encoder_kernel_size = 5;              // kernel of the encoder convolutions (odd)
  int64_t encoder_n_convolutions = 3;           // encoder convolutions
  int64_t encoder_embedding_dim = 512;          // E: encoder width (must equal symbols_embedding_dim)
  int64_t attention_rnn_dim = 1024;             // Ha: attention LSTM units
  int64_t attention_dim = 128;                  // A: width of the attention energies' hidden layer
  int64_t attention_location_n_filters = 32;    // K: location convolution filters
  int64_t attention_location_kernel_size = 31;  // location convolution kernel (odd)
  int64_t decoder_rnn_dim = 1024;               // Hd: decoder LSTM units
  int64_t prenet_dim = 256;                     // P: width of both prenet layers
  int64_t max_decoder_steps = 2000;             // inference: steps at most
  double gate_threshold = 0.5;                  // inference: stop when sigmoid(gate) > this
  double p_attention_dropout = 0.1;             // on the attention LSTM's output in training; 0 disables
  double p_decoder_dropout = 0.1;               // on the decoder LSTM's output in training; 0 disables
  double prenet_dropout = 0.5;                  // prenet dropout, in training AND inference; 0 disables
  double conv_dropout = 0.5;                    // after encoder and postnet convolutions in training; 0 disables
  int64_t postnet_embedding_dim = 512;          // postnet channels
  int64_t postnet_kernel_size = 5;              // postnet kernel (odd)
  int64_t postnet_n_convolutions = 5;           // postnet convolutions (>= 2)

  void visit(ConfigVisitor& v) {
    v.field("n_mel_channels", n_mel_channels, "bins of each frame");
    v.field("n_symbols", n_symbols, "input symbols");
    v.field("symbols_embedding_dim", symbols_embedding_dim, "embedding width (= encoder_embedding_dim)");
    v.field("encoder_kernel_size", encoder_kernel_size, "kernel of the encoder convolutions (odd)");
    v.field("encoder_n_convolutions", encoder_n_convolutions, "encoder convolutions");
    v.field("encoder_embedding_dim", encoder_embedding_dim, "encoder width");
    v.field("attention_rnn_dim", attention_rnn_dim, "attention LSTM units");
    v.field("attention_dim", attention_dim, "width of the attention energies' hidden layer");
    v.field("attention_location_n_filters", attention_location_n_filters, "location convolution filters");
    v.field("attention_location_kernel_size", attention_location_kernel_size, "location convolution kernel (odd)");
    v.field("decoder_rnn_dim", decoder_rnn_dim, "decoder LSTM units");
    v.field("prenet_dim", prenet_dim, "width of both prenet layers");
    v.field("max_decoder_steps", max_decoder_steps, "inference: decoder steps at most");
    v.field("gate_threshold", gate_threshold, "inference: stop when sigmoid(gate) > this");
    v.field("p_attention_dropout", p_attention_dropout, "dropout on the attention LSTM's output; 0 disables");
    v.field("p_decoder_dropout", p_decoder_dropout, "dropout on the decoder LSTM's output; 0 disables");
    v.field("prenet_dropout", prenet_dropout, "prenet dropout, on at inference too; 0 disables");
    v.field("conv_dropout", conv_dropout, "dropout after encoder and postnet convolutions; 0 disables");
    v.field("postnet_embedding_dim", postnet_embedding_dim, "postnet channels");
    v.field("postnet_kernel_size", postnet_kernel_size, "postnet kernel (odd)");
    v.field("postnet_n_convolutions", postnet_n_convolutions, "postnet convolutions");
  }
};

// The decoder's state between steps (their initialize_decoder_states), for one batch of utterances.
struct Tacotron2DecoderState {
  torch::Tensor attention_hidden, attention_cell;  // [B, Ha]
  torch::Tensor decoder_hidden, decoder_cell;      // [B, Hd]
  torch::Tensor attention_weights;                 // [B, S] the previous step's
  torch::Tensor attention_weights_cum;             // [B, S] their sum over the steps so far
  torch::Tensor attention_context;                 // [B, E]
  torch::Tensor memory;                            // [B, S, E] the encoder output
  torch::Tensor processed_memory;                  // [B, S, A]
  torch::Tensor pad_mask;                          // [B, S] bool, true past each text's length
  // The attention and decoder LSTMs' steps. While autograd records (training), each weight's
  // gradient is made once for all steps (nn/recurrent_linear.h).
  std::optional<RecurrentLstmCell> attention_lstm, decoder_lstm;
};

struct Tacotron2Step {
  torch::Tensor frame;      // [B, F]
  torch::Tensor gate;       // [B] stop-token logit
  torch::Tensor weights;    // [B, S] attention weights
};

class Tacotron2ModelImpl : public SpeechSynthesizerImpl {
 public:
  // vocab_size > 0 replaces config.n_symbols (the symbols of the data it is built for).
  explicit Tacotron2ModelImpl(const Tacotron2Config& config, int64_t vocab_size = 0);

  SynthesisOutput forward(const torch::Tensor& text, const torch::Tensor& text_lengths,
                          const torch::Tensor& frames) override;
  Synthesis infer(const torch::Tensor& text, const torch::Tensor& text_lengths,
                  const SynthesisOptions& options) override;
  int64_t frame_bins() const override { return config_.n_mel_channels; }
  int64_t symbols() const override { return config_.n_symbols; }
  void initialize_output_bias(const torch::Tensor& frame_mean, double stop_logit) override;
  const Tacotron2Config& config() const { return config_; }

  // text [B, S], lengths [B] -> encoder output [B, S, E] (zeros past each length).
  torch::Tensor encode(const torch::Tensor& text, const torch::Tensor& text_lengths);
  // The decoder's state before the first step (zeros; the memory processed once). Make it inside
  // the forward pass that runs the steps (it reads GradMode and autocast).
  Tacotron2DecoderState start(const torch::Tensor& memory, const torch::Tensor& text_lengths);
  // One decoder step from the previous frame [B, F] (zeros for the first): prenet, then decode.
  Tacotron2Step step(const torch::Tensor& previous_frame, Tacotron2DecoderState& state);
  // One decoder step from the prenet's output [B, P] (teacher forcing runs the prenet on all frames
  // at once, as the reference does).
  Tacotron2Step decode(const torch::Tensor& prenet_output, Tacotron2DecoderState& state);
  // frames [B, F, T] + postnet(frames).
  torch::Tensor postnet_frames(const torch::Tensor& frames);

  // Registered in the reference's order: embedding, encoder (convolutions, lstm), decoder (prenet,
  // attention_rnn, attention_layer, decoder_rnn, linear_projection, gate_layer), postnet.
  torch::nn::Embedding embedding{nullptr};
  torch::nn::ModuleList encoder_convolutions{nullptr};  // Sequential(conv, batch norm) each
  torch::nn::LSTM encoder_lstm{nullptr};
  Prenet prenet{nullptr};
  torch::nn::LSTMCell attention_rnn{nullptr};
  LocationSensitiveAttention attention_layer{nullptr};
  torch::nn::LSTMCell decoder_rnn{nullptr};
  torch::nn::Linear linear_projection{nullptr};
  torch::nn::Linear gate_layer{nullptr};
  ConvPostnet postnet{nullptr};

 private:
  // A decoder step up to the projections: [decoder LSTM output; context] [B, Hd + E], and the
  // attention weights [B, S]. Teacher forcing projects all steps' outputs at once.
  std::pair<torch::Tensor, torch::Tensor> decode_hidden(const torch::Tensor& prenet_output,
                                                        Tacotron2DecoderState& state);

  Tacotron2Config config_;
};

}  // namespace mixseq
