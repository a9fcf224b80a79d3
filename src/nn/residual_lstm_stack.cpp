#include "mixseq/nn/residual_lstm_stack.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/rnn.h>

#include <string>

#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/quantizable_lstm.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

torch::nn::ModuleList make_layers(const ResidualLstmStackOptions& options) {
  torch::nn::ModuleList layers;
  for (int64_t i = 0; i < options.num_layers; ++i) {
    const int64_t input_size = (i == 0 ? options.input_size : options.hidden_size) + options.extra_input_size;
    QuantizableLstm lstm(input_size, options.hidden_size);
    init_lstm_uniform_(*lstm, options.init_range);
    layers->push_back(lstm);
  }
  return layers;
}

}  // namespace

ResidualLstmStackImpl::ResidualLstmStackImpl(const ResidualLstmStackOptions& options)
    : layers_(register_module("layers", make_layers(options))),
      dropout_(options.dropout),
      concats_(static_cast<size_t>(options.num_layers), QuantizationPoint(nullptr)),
      residual_adds_(static_cast<size_t>(options.num_layers), QuantizationPoint(nullptr)) {
  for (int64_t i = 0; i < options.num_layers; ++i) {
    const auto n = std::to_string(i);
    if (options.extra_input_size > 0) concats_[i] = register_module("concat_" + n, QuantizationPoint());
    if (i > 0) residual_adds_[i] = register_module("residual_add_" + n, QuantizationPoint());
  }
}

std::tuple<torch::Tensor, std::vector<LstmState>> ResidualLstmStackImpl::forward(const torch::Tensor& x,
                                                                                 const torch::Tensor& extra,
                                                                                 const std::vector<LstmState>& states) {
  const auto num_layers = layers_->size();
  MIXSEQ_CHECK(states.empty() || states.size() == num_layers, "ResidualLstmStack: got ", states.size(),
               " states for ", num_layers, " layers");
  auto h = x;  // [B, T, Din]
  std::vector<LstmState> next_states;
  next_states.reserve(num_layers);
  for (size_t i = 0; i < num_layers; ++i) {
    // cat promotes mixed dtypes (an fp32 LSTM output and a lower-precision autocast context).
    const auto input = extra.defined() ? concats_[i](at::cat({h, extra}, /*dim=*/-1)) : h;  // [B, T, Din + E]
    auto [output, state] = layers_->ptr<QuantizableLstmImpl>(i)->forward(
        hashed_dropout(input, dropout_, is_training()), states.empty() ? torch::optional<LstmState>() : states[i]);  // [B, T, H]
    h = i == 0 ? output : residual_adds_[i](output + h);
    next_states.push_back(std::move(state));
  }
  return {h, std::move(next_states)};
}

}  // namespace mixseq
