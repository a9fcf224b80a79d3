// QuantizableLstmCell: the cell arithmetic of one LSTM step with a quantization point
// (nn/quantization_point.h) at every boundary Distiller's DistillerLSTMCell quantizes:
//
//   gates = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh                         point "gates" (the add)
//   i, f, g, o = split(gates) (PyTorch's order)
//   σ(i), σ(f), tanh(g), σ(o)                                       points "sigmoid_i", "sigmoid_f",
//                                                                   "tanh_g", "sigmoid_o"
//   c' = σ(f) ⊙ c + σ(i) ⊙ tanh(g)                                  points "forget_product",
//                                                                   "input_gate_product", "c" (the add)
//   h' = σ(o) ⊙ tanh(c')                                            points "tanh_c", "h" (the product)
//
// The sigmoids and tanhs themselves stay fp32; "gates" quantizes their inputs. In float every
// point passes its tensor through untouched, so the step is the plain fp32 LSTM cell.
//
// run_lstm_by_products() runs a whole sequence step by step with two QuantizableLinear gate
// products (nn/quantizable_lstm.h, nn/bidirectional_lstm.h use it while anything is quantized
// or observed). Not thread-safe (like every module).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <tuple>

#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantization_point.h"

namespace mixseq {

class QuantizableLstmCellImpl : public torch::nn::Module {
 public:
  QuantizableLstmCellImpl();

  // input_gates, hidden_gates [B, 4H] (the two products), c [B, H] -> (h', c'), each [B, H], fp32.
  std::tuple<torch::Tensor, torch::Tensor> forward(const torch::Tensor& input_gates, const torch::Tensor& hidden_gates,
                                                   const torch::Tensor& c);

  bool active() const;  // whether any point is quantized or observed

 private:
  QuantizationPoint gates_;
  QuantizationPoint sigmoid_i_;
  QuantizationPoint sigmoid_f_;
  QuantizationPoint tanh_g_;
  QuantizationPoint sigmoid_o_;
  QuantizationPoint forget_product_;
  QuantizationPoint input_gate_product_;
  QuantizationPoint c_;
  QuantizationPoint tanh_c_;
  QuantizationPoint h_;
};
TORCH_MODULE(QuantizableLstmCell);

// x [B, T, Din] from (h, c) [B, H] each -> outputs [B, T, H] and the last (h, c), fp32.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> run_lstm_by_products(QuantizableLinearImpl& input_product,
                                                                             QuantizableLinearImpl& hidden_product,
                                                                             QuantizableLstmCellImpl& cell,
                                                                             const torch::Tensor& x, torch::Tensor h,
                                                                             torch::Tensor c);

}  // namespace mixseq
