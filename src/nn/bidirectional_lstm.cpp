#include "mixseq/nn/bidirectional_lstm.h"

#include <ATen/ATen.h>
#include <torch/nn/utils/rnn.h>

#include <string>

#include "mixseq/nn/lstm.h"
#include "mixseq/nn/lstm_recurrence.h"

namespace mixseq {
namespace {

torch::nn::LSTM make_lstm(const BidirectionalLstmOptions& options) {
  torch::nn::LSTM lstm(
      torch::nn::LSTMOptions(options.input_size, options.hidden_size).batch_first(true).bidirectional(true));
  init_lstm_uniform_(*lstm, options.init_range);
  return lstm;
}

QuantizableLinear product_view(torch::nn::LSTM& lstm, const std::string& weight, const std::string& bias) {
  const auto parameters = lstm->named_parameters(/*recurse=*/false);
  return QuantizableLinear(parameters[weight], parameters[bias]);
}

// [B, S] positions that read each sentence backwards within its length and leave its padding in
// place: index[b][t] = len_b - 1 - t for t < len_b, else t. Its own inverse.
torch::Tensor reversed_positions(const torch::Tensor& lengths, int64_t s) {  // lengths [B]
  const auto t = at::arange(s, lengths.options()).unsqueeze(0);             // [1, S]
  const auto len = lengths.unsqueeze(1);                                    // [B, 1]
  return at::where(t < len, len - 1 - t, t);                                // [B, S]
}

}  // namespace

BidirectionalLstmImpl::BidirectionalLstmImpl(const BidirectionalLstmOptions& options)
    : lstm_(register_module("lstm", make_lstm(options))),
      input_product_(register_module("input_product", product_view(lstm_, "weight_ih_l0", "bias_ih_l0"))),
      hidden_product_(register_module("hidden_product", product_view(lstm_, "weight_hh_l0", "bias_hh_l0"))),
      cell_(register_module("cell", QuantizableLstmCell())),
      reverse_input_product_(register_module("reverse_input_product",
                                             product_view(lstm_, "weight_ih_l0_reverse", "bias_ih_l0_reverse"))),
      reverse_hidden_product_(register_module("reverse_hidden_product",
                                              product_view(lstm_, "weight_hh_l0_reverse", "bias_hh_l0_reverse"))),
      reverse_cell_(register_module("reverse_cell", QuantizableLstmCell())),
      concat_(register_module("concat", QuantizationPoint())) {}

bool BidirectionalLstmImpl::by_products() const {
  for (const auto* product : {&input_product_, &hidden_product_, &reverse_input_product_, &reverse_hidden_product_})
    if ((*product)->quantization().precision != LinearPrecision::kFloat || (*product)->observed()) return true;
  return cell_->active() || reverse_cell_->active() || concat_->active();
}

torch::Tensor BidirectionalLstmImpl::forward(const torch::Tensor& x, const torch::Tensor& lengths) {
  const bool quantized = by_products();
  if (!quantized && !lstm_recurrence_applies(x, direction_weights(""))) return forward_packed(x, lengths);
  return forward_by_directions(x, lengths, quantized);
}

LstmWeights BidirectionalLstmImpl::direction_weights(const std::string& suffix) const {
  const auto parameters = lstm_->named_parameters(/*recurse=*/false);
  return {parameters["weight_ih_l0" + suffix], parameters["weight_hh_l0" + suffix], parameters["bias_ih_l0" + suffix],
          parameters["bias_hh_l0" + suffix]};
}

torch::Tensor BidirectionalLstmImpl::forward_packed(const torch::Tensor& x, const torch::Tensor& lengths) {
  namespace rnn = torch::nn::utils::rnn;
  // Packing needs the lengths on the CPU; enforce_sorted=false sorts the rows and unsorts the
  // result, so callers need not sort their batches by length.
  const auto packed = rnn::pack_padded_sequence(to_lstm_dtype(*lstm_, x), lengths.to(torch::kCPU),
                                                /*batch_first=*/true, /*enforce_sorted=*/false);
  const auto output = std::get<0>(lstm_->forward_with_packed_input(packed));
  // total_length keeps S even when every sentence in the batch is shorter, so the output
  // lines up with the source tokens and their padding mask.
  return std::get<0>(rnn::pad_packed_sequence(output, /*batch_first=*/true, /*padding_value=*/0.0,
                                              /*total_length=*/x.size(1)));  // [B, S, 2H]
}

torch::Tensor BidirectionalLstmImpl::forward_by_directions(const torch::Tensor& x, const torch::Tensor& lengths,
                                                           bool quantized) {
  // The forward direction at position t reads positions <= t only, so the padding after a
  // sentence changes none of its outputs; the backward direction reads each sentence reversed.
  const auto lengths_here = lengths.to(x.device(), at::kLong);  // [B]
  const auto dtype = quantized ? at::kFloat : lstm_->all_weights().front().scalar_type();
  const auto zeros = at::zeros({x.size(0), lstm_->options.hidden_size()}, x.options().dtype(dtype));  // [B, H]
  const auto run = [&](bool reverse, const torch::Tensor& input) {  // [B, S, Din] -> [B, S, H]
    if (quantized)
      return std::get<0>(reverse ? run_lstm_by_products(*reverse_input_product_, *reverse_hidden_product_,
                                                        *reverse_cell_, input, zeros, zeros)
                                 : run_lstm_by_products(*input_product_, *hidden_product_, *cell_, input, zeros, zeros));
    return std::get<0>(lstm_recurrence(input, zeros, zeros, direction_weights(reverse ? "_reverse" : "")));
  };
  const auto reverse = reversed_positions(lengths_here, x.size(1));                    // [B, S]
  const auto gather = [](const torch::Tensor& t, const torch::Tensor& index) {         // t [B, S, D]
    return t.gather(1, index.unsqueeze(2).expand({-1, -1, t.size(2)}));
  };
  const auto forward_output = run(false, x);
  const auto backward_output = gather(run(true, gather(x, reverse)), reverse);          // [B, S, H]
  const auto keep = (at::arange(x.size(1), lengths_here.options()).unsqueeze(0) < lengths_here.unsqueeze(1))
                        .unsqueeze(2).to(forward_output.scalar_type());                  // [B, S, 1]
  return concat_(at::cat({forward_output, backward_output}, /*dim=*/2)) * keep;         // [B, S, 2H]
}

}  // namespace mixseq
