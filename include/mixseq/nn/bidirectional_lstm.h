// BidirectionalLstm: one bidirectional LSTM layer over a right-padded batch of sentences of
// different lengths. The batch is packed (torch::nn::utils::rnn::pack_padded_sequence), so
// the backward direction of each sentence starts at its own last token, not at the padding:
// a sentence gets the same outputs alone as inside any padded batch. Outputs at padded
// positions are zero.
//
// GNMT's first encoder layer (Wu et al. 2016, §3; NVIDIA's ResidualRecurrentEncoder packs it
// the same way).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

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
  torch::nn::LSTM lstm_;
};
TORCH_MODULE(BidirectionalLstm);

}  // namespace mixseq
