#include "mixseq/nn/bidirectional_lstm.h"

#include <torch/nn/utils/rnn.h>

#include "mixseq/nn/lstm.h"

namespace mixseq {

BidirectionalLstmImpl::BidirectionalLstmImpl(const BidirectionalLstmOptions& options)
    : lstm_(register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(options.input_size, options.hidden_size)
                                                        .batch_first(true)
                                                        .bidirectional(true)))) {
  init_lstm_uniform_(*lstm_, options.init_range);
}

torch::Tensor BidirectionalLstmImpl::forward(const torch::Tensor& x, const torch::Tensor& lengths) {
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

}  // namespace mixseq
