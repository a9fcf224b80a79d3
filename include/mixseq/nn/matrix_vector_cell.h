// A decoding step's products through matrix-vector kernels. With one row on the left, LibTorch's
// linear goes to addmm, whose BLAS gemm packs the whole weight matrix on every call: on this
// project's CPUs (Debian's OpenBLAS 0.3.21, Cooper Lake) a [1, 640] x [640, 2048] product took
// 1.07 ms through addmm and 0.32 ms through addmv (gemv reads the weight once, unpacked). Tacotron 2's
// batch-1 synthesis makes ~7 such products per decoder step.
// Both functions fall back to LibTorch's own path (linear, lstm_cell) where the fast one does not
// apply: more than one row, autograd recording, not fp32, not on the CPU; results agree with it up
// to rounding. Pure functions.
#pragma once

#include <torch/types.h>

#include <tuple>

namespace mixseq {

// Whether x [1, in] takes the gemv path: one row, fp32, CPU, no gradient being recorded.
bool uses_matrix_vector_path(const torch::Tensor& x);

// x [B, in] @ weight [out, in]^T + bias [out] (bias may be undefined) -> [B, out].
torch::Tensor matrix_vector_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {});

// One LSTM cell step as torch::nn::LSTMCell (gates i, f, g, o): x [B, in], h and c [B, H] ->
// (h', c'), each [B, H].
std::tuple<torch::Tensor, torch::Tensor> matrix_vector_lstm_cell(const torch::Tensor& x, const torch::Tensor& h,
                                                                 const torch::Tensor& c, const torch::Tensor& w_ih,
                                                                 const torch::Tensor& w_hh, const torch::Tensor& b_ih,
                                                                 const torch::Tensor& b_hh);

}  // namespace mixseq
