#include "mixseq/models/lstm_lm.h"

#include <ATen/ATen.h>

#include <cmath>
#include <tuple>

#include "mixseq/nn/cpu_float_linear.h"
#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/lstm_recurrence.h"
#include "mixseq/nn/token_nll.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

const char* const kOwner = "model.lstm_lm";

void check_context(const LmContext& context) {
  MIXSEQ_CHECK(context.mem_len >= 0, kOwner, ": mem_len must be at least 0, got ", context.mem_len,
               " (an LSTM carries its whole state and ignores it)");
  MIXSEQ_CHECK(context.clamp_len >= -1, kOwner, ": clamp_len must be -1 or more, got ", context.clamp_len,
               " (an LSTM has no positions to clamp and ignores it)");
}

// Checks the whole config before any module is built; returns vocab_size.
int64_t checked_vocab_size(const LstmLmConfig& config, int64_t vocab_size) {
  const auto positive = [](const char* key, int64_t value) {
    MIXSEQ_CHECK(value > 0, kOwner, ".", key, " must be positive, got ", value);
  };
  positive("embed_dim", config.embed_dim);
  positive("hidden_size", config.hidden_size);
  positive("num_layers", config.num_layers);
  for (const auto& [key, value] :
       {std::pair{"dropout_embed", config.dropout_embed}, std::pair{"dropout_hidden", config.dropout_hidden},
        std::pair{"dropout_output", config.dropout_output}, std::pair{"weight_drop", config.weight_drop}})
    MIXSEQ_CHECK(value >= 0.0 && value < 1.0, kOwner, ".", key, " must be in [0, 1), got ", value, "; 0 disables it");
  MIXSEQ_CHECK(config.init_range > 0.0 && std::isfinite(config.init_range), kOwner,
               ".init_range must be positive, got ", config.init_range);
  MIXSEQ_CHECK(vocab_size >= 2, kOwner, ": the vocabulary must hold at least 2 entries, got ", vocab_size);
  return vocab_size;
}

torch::nn::ModuleList make_layers(const LstmLmConfig& config) {
  torch::nn::ModuleList layers;
  for (int64_t i = 0; i < config.num_layers; ++i) {
    const int64_t input_size = i == 0 ? config.embed_dim : config.hidden_size;
    // PyTorch's own initialisation, U(-1/sqrt(H), 1/sqrt(H)) for every weight and bias, as the
    // reference leaves its nn.LSTM.
    layers->push_back(torch::nn::LSTM(torch::nn::LSTMOptions(input_size, config.hidden_size).batch_first(true)));
  }
  return layers;
}

bool projected(const LstmLmConfig& config) { return config.tie_weights && config.hidden_size != config.embed_dim; }

// One layer over x [B, T, Din] from h0, c0 [B, H] -> output [B, T, H], h_T, c_T [B, H]. With
// weight_drop in training, the hidden-to-hidden matrix is AWD-LSTM's WeightDrop of it: a function
// of the raw matrix (which gets the gradient), one mask for every step of the segment.
// `panels` keeps W_hh laid out between evaluation segments (nn/lstm_recurrence.h).
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> run_layer(torch::nn::LSTMImpl& lstm, const torch::Tensor& x,
                                                                  const torch::Tensor& h0, const torch::Tensor& c0,
                                                                  double weight_drop, bool training,
                                                                  LstmPanelCache& panels) {
  // In PyTorch's order: weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0.
  const auto weights = lstm.all_weights();
  const LstmWeights used{weights[0], hashed_dropout(weights[1], weight_drop, training), weights[2], weights[3],
                         &panels};
  const auto dtype = weights[0].scalar_type();
  if (lstm_recurrence_applies(x, used)) return lstm_recurrence(x, h0.to(dtype), c0.to(dtype), used);
  // LibTorch's fused LSTM (cuDNN on the GPU). Inputs in the weights' dtype, as nn/lstm.h's run_lstm.
  // `train` only drops out between layers (none: one layer, dropout 0), but cuDNN keeps what its
  // backward needs only when it is set, so it is set whenever a gradient may be asked for.
  const bool keeps_for_backward = training || at::GradMode::is_enabled();
  auto [y, h, c] = at::lstm(x.to(dtype), {h0.to(dtype).unsqueeze(0), c0.to(dtype).unsqueeze(0)},
                            {used.w_ih, used.w_hh, used.b_ih, used.b_hh}, /*has_biases=*/true, /*num_layers=*/1,
                            /*dropout=*/0.0, /*train=*/keeps_for_backward, /*bidirectional=*/false,
                            /*batch_first=*/true);
  return {y, h.squeeze(0), c.squeeze(0)};
}

void check_ids(const torch::Tensor& ids, int64_t vocab_size, const char* what) {
  const auto [low, high] = at::aminmax(ids);
  MIXSEQ_CHECK(low.item<int64_t>() >= 0 && high.item<int64_t>() < vocab_size, "LstmLmModel: ", what,
               " must be ids in [0, ", vocab_size, "), got ", low.item<int64_t>(), " .. ", high.item<int64_t>());
}

}  // namespace

LstmLmModelImpl::LstmLmModelImpl(const LstmLmConfig& config, int64_t vocab_size, bool output_layer)
    : vocab_size_(checked_vocab_size(config, vocab_size)),
      hidden_size_(config.hidden_size),
      dropout_embed_(config.dropout_embed),
      dropout_hidden_(config.dropout_hidden),
      dropout_output_(config.dropout_output),
      weight_drop_(config.weight_drop),
      tie_weights_(config.tie_weights),
      output_layer_(output_layer),
      embedding_(register_module("embedding", torch::nn::Embedding(vocab_size, config.embed_dim))),
      layers_(register_module("layers", make_layers(config))),
      panel_caches_(static_cast<size_t>(config.num_layers)) {
  if (output_layer && projected(config))
    projection_ = register_module(
        "projection", torch::nn::Linear(torch::nn::LinearOptions(config.hidden_size, config.embed_dim).bias(false)));
  if (output_layer && !tie_weights_)
    output_weight_ = register_parameter("output_weight", at::empty({vocab_size, config.hidden_size}));
  if (output_layer) output_bias_ = register_parameter("output_bias", at::empty({vocab_size}));
  // The reference's init_weights: encoder and decoder weights U(-0.1, 0.1), decoder bias 0.
  torch::NoGradGuard no_grad;
  embedding_->weight.uniform_(-config.init_range, config.init_range);
  if (output_weight_.defined()) output_weight_.uniform_(-config.init_range, config.init_range);
  if (output_bias_.defined()) output_bias_.zero_();
}

void LstmLmModelImpl::set_context(const LmContext& context) {
  check_context(context);
  context_ = context;
}

std::pair<torch::Tensor, LmMemory> LstmLmModelImpl::encode(const torch::Tensor& tokens, const LmMemory& memory) {
  MIXSEQ_CHECK(tokens.dim() == 2 && tokens.size(0) >= 1 && tokens.size(1) >= 1,
               "LstmLmModel: tokens must be [B, T] with B, T >= 1, got ", tokens.sizes());
  const int64_t B = tokens.size(0), L = num_layers();
  MIXSEQ_CHECK(memory.empty() || static_cast<int64_t>(memory.layers.size()) == 2 * L,
               "LstmLmModel: the memory must hold h and c for each of the ", L, " layers (", 2 * L,
               " tensors), got ", memory.layers.size());
  for (const auto& state : memory.layers)
    MIXSEQ_CHECK(state.dim() == 3 && state.size(0) == B && state.size(1) == 1 && state.size(2) == hidden_size_,
                 "LstmLmModel: every memory tensor must be [B = ", B, ", 1, H = ", hidden_size_, "], got ",
                 state.sizes(), "; pass the memory that the previous segment of the same rows returned");
  const bool training = is_training();
  auto x = hashed_dropout(embedding_(tokens), dropout_embed_, training);  // [B, T, E]
  LmMemory next;
  for (int64_t i = 0; i < L; ++i) {
    auto& lstm = layers_->at<torch::nn::LSTMImpl>(i);
    if (i > 0) x = hashed_dropout(x, dropout_hidden_, training);
    torch::Tensor h0, c0;  // [B, H]
    if (memory.empty()) {
      h0 = c0 = at::zeros({B, hidden_size_}, x.options().dtype(lstm.all_weights()[0].scalar_type()));
    } else {
      h0 = memory.layers[2 * i].squeeze(1), c0 = memory.layers[2 * i + 1].squeeze(1);
    }
    auto [y, h, c] = run_layer(lstm, x, h0, c0, weight_drop_, training, panel_caches_[i]);  // [B, T, H], [B, H], [B, H]
    next.layers.push_back(h.detach().unsqueeze(1));     // [B, 1, H]
    next.layers.push_back(c.detach().unsqueeze(1));
    x = y;
  }
  return {x, std::move(next)};  // [B, T, H]
}

std::vector<std::vector<torch::Tensor>> LstmLmModelImpl::layer_groups() const {
  std::vector<std::vector<torch::Tensor>> groups;
  for (int64_t i = num_layers() - 1; i >= 0; --i) {
    auto group = layers_->ptr(static_cast<size_t>(i))->parameters();
    if (i == 0) group.push_back(embedding_->weight);
    groups.push_back(std::move(group));
  }
  return groups;
}

std::pair<torch::Tensor, LmMemory> LstmLmModelImpl::hidden_states(const torch::Tensor& tokens,
                                                                  const LmMemory& memory) {
  MIXSEQ_CHECK(output_layer_, "LstmLmModel: built without its output layer (a classifier's encoder), it gives no "
                              "probabilities; call encode()");
  auto [x, next] = encode(tokens, memory);           // [B, T, H]
  x = hashed_dropout(x, dropout_output_, is_training());  // [B, T, H]
  if (projection_) x = projection_(x);               // [B, T, E]
  return {x, std::move(next)};
}

torch::Tensor LstmLmModelImpl::output_log_probs(const torch::Tensor& hidden) const {
  const auto scores = at::linear(hidden, output_weight(), output_bias_);  // [N, V], in the autocast dtype
  const auto dtype = output_bias_.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  return at::log_softmax(scores, -1, dtype);                              // [N, V] fp32
}

LmOutput LstmLmModelImpl::forward(const torch::Tensor& tokens, const torch::Tensor& targets, const LmMemory& memory) {
  MIXSEQ_CHECK(targets.sizes() == tokens.sizes(), "LstmLmModel: targets ", targets.sizes(),
               " must have the shape of tokens ", tokens.sizes());
  check_ids(tokens, vocab_size_, "tokens");
  check_ids(targets, vocab_size_, "targets");
  auto [hidden, next] = hidden_states(tokens, memory);                            // [B, T, E or H]
  // (in fp32 through oneDNN's sgemm; in evaluation from a kept [H, V] copy: nn/cpu_float_linear.h)
  const auto products = output_columns_.linear(hidden.reshape({-1, hidden.size(2)}), output_weight());  // [B T, V]
  // -log p(target) in fp32 from products + bias in one pass, 0 where the target is kPadId; no
  // [B T, V] log-probabilities, and the bias added as the rows are read (nn/token_nll.h).
  const auto nll = token_nll(products, targets.reshape({-1}), output_bias_);  // [B T]
  return {nll.view(targets.sizes()), std::move(next), hidden};
}

LmLogProbs LstmLmModelImpl::log_probs(const torch::Tensor& tokens, const LmMemory& memory) {
  check_ids(tokens, vocab_size_, "tokens");
  auto [hidden, next] = hidden_states(tokens, memory);  // [B, T, E or H]
  const auto flat = output_log_probs(hidden.reshape({-1, hidden.size(2)}));  // [B T, V]
  return {flat.view({tokens.size(0), tokens.size(1), vocab_size_}), std::move(next)};  // [B, T, V]
}

}  // namespace mixseq
