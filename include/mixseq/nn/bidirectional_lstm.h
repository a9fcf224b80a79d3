// BidirectionalLstm: one bidirectional LSTM layer over a right-padded batch of sentences of
// different lengths. The backward direction of each sentence starts at its own last token, not
// at the padding (the batch is packed, or each sentence reversed within its length):
// a sentence gets the same outputs alone as inside any padded batch. Outputs at padded
// positions are zero.
//
// GNMT's first encoder layer (Wu et al. 2016, §3; NVIDIA's ResidualRecurrentEncoder packs it
// the same way).
//
// Quantizable like nn/quantizable_lstm.h, per direction: the gate products are QuantizableLinear
// views of the LSTM's own weights, "input_product" and "hidden_product" (forward direction),
// "reverse_input_product" and "reverse_hidden_product" (backward), and the cell arithmetic is
// "cell" and "reverse_cell" (nn/quantizable_lstm_cell.h), and the two directions' concatenation
// is the point "concat". None registers parameters: the checkpoint keys stay lstm.*. While any
// of them is quantized or observed, each direction runs
// step by step over the padded batch, the backward one over every sentence reversed within its
// length. In float on the CPU each direction runs nn/lstm_recurrence.h over the same reversed
// batch (its backward pass is the fast one); elsewhere the packed fused LSTM runs.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <string>

#include "mixseq/nn/lstm_recurrence.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantizable_lstm_cell.h"
#include "mixseq/nn/quantization_point.h"

namespace mixseq {

struct BidirectionalLstmOptions {
  int64_t input_size = 0;   // width of the input
  int64_t hidden_size = 0;  // units per direction; the output is 2 * hidden_size wide
  double init_range = 0.1;  // parameters uniform in [-init_range, init_range] (hidden-hidden biases 0, see lstm.h)
};

class BidirectionalLstmImpl : public torch::nn::Module {
 public:
  explicit BidirectionalLstmImpl(const BidirectionalLstmOptions& options);

  // x [B, S, Din], lengths [B] int64 (any device; 1 <= length <= S) -> [B, S, 2H]: forward
  // direction in [..., :H], backward direction in [..., H:], zeros at padding.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& lengths);

 private:
  bool by_products() const;  // whether a product or a point is quantized or observed
  LstmWeights direction_weights(const std::string& suffix) const;  // "" forward, "_reverse" backward
  torch::Tensor forward_packed(const torch::Tensor& x, const torch::Tensor& lengths);  // LibTorch's LSTM
  // Each direction over the padded batch, the backward one over every sentence reversed within
  // its length: by the products while quantized, else by nn/lstm_recurrence.h.
  torch::Tensor forward_by_directions(const torch::Tensor& x, const torch::Tensor& lengths, bool quantized);

  torch::nn::LSTM lstm_;
  QuantizableLinear input_product_;           // forward direction: x W_ihᵀ + b_ih
  QuantizableLinear hidden_product_;          // h W_hhᵀ + b_hh
  QuantizableLstmCell cell_;
  QuantizableLinear reverse_input_product_;   // backward direction
  QuantizableLinear reverse_hidden_product_;
  QuantizableLstmCell reverse_cell_;
  QuantizationPoint concat_;  // [forward, backward] outputs, before the padding is zeroed
};
TORCH_MODULE(BidirectionalLstm);

}  // namespace mixseq
