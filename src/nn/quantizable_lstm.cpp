#include "mixseq/nn/quantizable_lstm.h"

#include <ATen/ATen.h>


#include "mixseq/nn/lstm_recurrence.h"

namespace mixseq {

QuantizableLstmImpl::QuantizableLstmImpl(int64_t input_size, int64_t hidden_size)
    : torch::nn::LSTMImpl(torch::nn::LSTMOptions(input_size, hidden_size).batch_first(true)),
      input_product_(register_module("input_product",
                                     QuantizableLinear(named_parameters(false)["weight_ih_l0"],
                                                       named_parameters(false)["bias_ih_l0"]))),
      hidden_product_(register_module("hidden_product",
                                      QuantizableLinear(named_parameters(false)["weight_hh_l0"],
                                                        named_parameters(false)["bias_hh_l0"]))),
      cell_(register_module("cell", QuantizableLstmCell())) {}

std::tuple<torch::Tensor, LstmState> QuantizableLstmImpl::forward(const torch::Tensor& x,
                                                                  const torch::optional<LstmState>& state) {
  const auto by_products = [](const QuantizableLinear& product) {
    return product->quantization().precision != LinearPrecision::kFloat || product->observed();
  };
  if (by_products(input_product_) || by_products(hidden_product_) || cell_->active())
    return forward_by_products(x, state);
  // LSTMImpl's own list, in PyTorch's order: weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0.
  const LstmWeights weights{flat_weights_[0], flat_weights_[1], flat_weights_[2], flat_weights_[3]};
  if (!lstm_recurrence_applies(x, weights)) return run_lstm(*this, x, state);  // LibTorch's LSTM
  const auto zeros = [&] { return at::zeros({x.size(0), options.hidden_size()}, x.options()); };
  const auto h0 = state ? std::get<0>(*state).squeeze(0).to(x.scalar_type()) : zeros();  // [B, H]
  const auto c0 = state ? std::get<1>(*state).squeeze(0).to(x.scalar_type()) : zeros();
  auto [output, h, c] = lstm_recurrence(x, h0, c0, weights);
  return {output, LstmState(h.unsqueeze(0), c.unsqueeze(0))};
}

std::tuple<torch::Tensor, LstmState> QuantizableLstmImpl::forward_by_products(const torch::Tensor& x,
                                                                              const torch::optional<LstmState>& state) {
  const auto zeros = [&] { return at::zeros({x.size(0), options.hidden_size()}, x.options().dtype(at::kFloat)); };
  auto h = state ? std::get<0>(*state).squeeze(0).to(at::kFloat) : zeros();  // [B, H]
  auto c = state ? std::get<1>(*state).squeeze(0).to(at::kFloat) : zeros();  // [B, H]
  torch::Tensor y;  // [B, T, H]
  std::tie(y, h, c) = run_lstm_by_products(*input_product_, *hidden_product_, *cell_, x, h, c);
  return {y, LstmState(h.unsqueeze(0), c.unsqueeze(0))};  // [B, T, H], ([1, B, H], [1, B, H])
}

}  // namespace mixseq
