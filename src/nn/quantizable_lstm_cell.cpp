#include "mixseq/nn/quantizable_lstm_cell.h"

#include <ATen/ATen.h>

#include <vector>

namespace mixseq {

QuantizableLstmCellImpl::QuantizableLstmCellImpl()
    : gates_(register_module("gates", QuantizationPoint())),
      sigmoid_i_(register_module("sigmoid_i", QuantizationPoint())),
      sigmoid_f_(register_module("sigmoid_f", QuantizationPoint())),
      tanh_g_(register_module("tanh_g", QuantizationPoint())),
      sigmoid_o_(register_module("sigmoid_o", QuantizationPoint())),
      forget_product_(register_module("forget_product", QuantizationPoint())),
      input_gate_product_(register_module("input_gate_product", QuantizationPoint())),
      c_(register_module("c", QuantizationPoint())),
      tanh_c_(register_module("tanh_c", QuantizationPoint())),
      h_(register_module("h", QuantizationPoint())) {}

bool QuantizableLstmCellImpl::active() const {
  for (const auto* point : {&gates_, &sigmoid_i_, &sigmoid_f_, &tanh_g_, &sigmoid_o_, &forget_product_,
                            &input_gate_product_, &c_, &tanh_c_, &h_})
    if ((*point)->active()) return true;
  return false;
}

std::tuple<torch::Tensor, torch::Tensor> QuantizableLstmCellImpl::forward(const torch::Tensor& input_gates,
                                                                          const torch::Tensor& hidden_gates,
                                                                          const torch::Tensor& c) {
  const auto gates = gates_(input_gates + hidden_gates);  // [B, 4H]
  const auto chunks = gates.chunk(4, /*dim=*/1);          // PyTorch's order: i, f, g, o; each [B, H]
  const auto i = sigmoid_i_(at::sigmoid(chunks[0])), f = sigmoid_f_(at::sigmoid(chunks[1]));
  const auto g = tanh_g_(at::tanh(chunks[2])), o = sigmoid_o_(at::sigmoid(chunks[3]));
  const auto next_c = c_(forget_product_(f * c) + input_gate_product_(i * g));  // [B, H]
  return {h_(o * tanh_c_(at::tanh(next_c))), next_c};                          // [B, H], [B, H]
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> run_lstm_by_products(QuantizableLinearImpl& input_product,
                                                                             QuantizableLinearImpl& hidden_product,
                                                                             QuantizableLstmCellImpl& cell,
                                                                             const torch::Tensor& x, torch::Tensor h,
                                                                             torch::Tensor c) {
  const auto input_gates = input_product.forward(x.to(at::kFloat));  // [B, T, 4H], all positions at once
  std::vector<torch::Tensor> outputs;
  outputs.reserve(static_cast<size_t>(x.size(1)));
  for (int64_t t = 0; t < x.size(1); ++t) {
    std::tie(h, c) = cell.forward(input_gates.select(1, t), hidden_product.forward(h), c);  // each [B, H]
    outputs.push_back(h);
  }
  return {at::stack(outputs, 1), h, c};  // [B, T, H], [B, H], [B, H]
}

}  // namespace mixseq
