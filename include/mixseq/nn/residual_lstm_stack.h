// ResidualLstmStack: unidirectional LSTM layers, each reading the previous layer's output
// (after dropout), and from the second layer on adding its input back to its output
// (a residual connection, Wu et al. 2016, §3.1: deep LSTM stacks train poorly without them).
// An optional extra input, the same for every layer, is concatenated to each layer's input:
// GNMT's decoder feeds the attention context to all its upper layers that way.
//
//   h_0 = x
//   h_1 = LSTM_1(dropout([h_0; extra]))
//   h_i = LSTM_i(dropout([h_{i-1}; extra])) + h_{i-1}     for i = 2 .. num_layers
//
// The first layer has no residual connection because its input may be wider than its output
// (GNMT: the 2H-wide bidirectional layer below the encoder stack).
//
// The layers run forward in time over right-padded batches without packing: padding comes
// after a sentence's last token, so it never changes the outputs at real positions (the
// outputs at padded positions are meaningless and must be masked by the caller).
//
// Quantization points (nn/quantization_point.h), for simulated quantization: "concat_N" on
// layer N's concatenated input [h; extra] (when there is an extra input) and "residual_add_N" on
// layer N's sum (N >= 1), N counting from 0 as "layers.N" does.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "mixseq/nn/lstm.h"
#include "mixseq/nn/quantization_point.h"

namespace mixseq {

struct ResidualLstmStackOptions {
  int64_t input_size = 0;        // width of x, the input of the first layer
  int64_t hidden_size = 0;       // LSTM units per layer, the width of the output
  int64_t num_layers = 1;        // LSTM layers; residual connections from the second on
  int64_t extra_input_size = 0;  // width of the input concatenated to every layer's input; 0 = none
  double dropout = 0.0;          // dropout on every layer's input (extra input included); 0 disables
  double init_range = 0.1;       // parameters uniform in [-init_range, init_range] (hidden-hidden biases 0, see lstm.h)
};

class ResidualLstmStackImpl : public torch::nn::Module {
 public:
  explicit ResidualLstmStackImpl(const ResidualLstmStackOptions& options);

  // x [B, T, input_size]; extra [B, T, extra_input_size] (undefined when extra_input_size is
  // 0); states: one per layer, or empty to start from zeros.
  // -> output [B, T, H] and each layer's state after the last position.
  std::tuple<torch::Tensor, std::vector<LstmState>> forward(const torch::Tensor& x, const torch::Tensor& extra = {},
                                                            const std::vector<LstmState>& states = {});

  size_t num_layers() const { return layers_->size(); }

 private:
  torch::nn::ModuleList layers_;  // QuantizableLstm, one per layer
  double dropout_;
  std::vector<QuantizationPoint> concats_;        // per layer; empty holders without an extra input
  std::vector<QuantizationPoint> residual_adds_;  // per layer; [0] is an empty holder (no residual)
};
TORCH_MODULE(ResidualLstmStack);

}  // namespace mixseq
