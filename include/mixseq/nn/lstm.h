// How mixseq runs LibTorch's fused LSTM (torch::nn::LSTM), the building block of every
// recurrent layer: one call runs one layer over a whole sequence, so a layer costs one call
// per batch in training and one per token in search.
//
// Every mixseq LSTM is single-layer and batch-first (input [B, T, Din], output [B, T, H]);
// stacks are made of separate layers so that dropout, residual connections and extra inputs
// can go between them.
#pragma once

#include <torch/nn/modules/rnn.h>

#include <tuple>

namespace mixseq {

// The recurrent state of one unidirectional single-layer LSTM: (h, c), each [1, B, H], the
// layout torch::nn::LSTM takes and returns.
using LstmState = std::tuple<torch::Tensor, torch::Tensor>;

// NVIDIA GNMT's init_lstm_ (seq2seq/utils.py): weights and input-hidden biases uniform in
// [-range, range], hidden-hidden biases zero. PyTorch's LSTM adds two bias vectors per gate;
// zeroing one keeps their sum, the gate bias, in [-range, range] like every other parameter.
void init_lstm_uniform_(torch::nn::LSTMImpl& lstm, double range);

// Runs `lstm` over x [B, T, Din] from `state` (nullopt: zeros). Returns the output [B, T, H]
// and the state after the last position.
//
// x and state are first cast to the dtype of the weights: outside autocast LibTorch's LSTM
// rejects a lower-precision input or state next to fp32 weights ("expected scalar type
// BFloat16 but found Float"), which happens when a state made under autocast (cuDNN returns
// it in fp16) is fed to a step run without it. Under autocast the matrix products still run
// in lower precision: cuDNN's autocast wrapper casts inputs and weights itself, and on the CPU
// (LibTorch 1.13) the LSTM is a composite op whose matrix products autocast one by one; the
// cell arithmetic, the output and the state follow the input's dtype, here fp32.
std::tuple<torch::Tensor, LstmState> run_lstm(torch::nn::LSTMImpl& lstm, const torch::Tensor& x,
                                              const torch::optional<LstmState>& state);

// x cast to the dtype of `lstm`'s weights, as run_lstm does; for callers that pack x first.
torch::Tensor to_lstm_dtype(const torch::nn::LSTMImpl& lstm, const torch::Tensor& x);

}  // namespace mixseq
