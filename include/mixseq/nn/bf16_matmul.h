// Products of bf16 matrices into fp32 results, for the LSTM's per-step products under bf16
// autocast (nn/lstm_recurrence.h).
//
// LibTorch's bf16 at::mm returns bf16: a step's h_{t-1} W_hhᵀ came back rounded to bf16 and was
// widened again for the fp32 cell, two conversions and an allocation per step and layer on top
// of the product (a [32, 256] x [256, 1024] product takes 46 us this way on one core, the same
// in oneDNN's dnnl_gemm_bf16bf16f32 27 us). Here the product goes straight into the fp32
// result, added to it or replacing it, through dnnl_gemm_bf16bf16f32 where the process has it
// (Debian's LibTorch links libdnnl dynamically; found at run time, as OpenBLAS's thread setter
// in util/threads.cpp), else as the fp32 product of the widened values (PyTorch 2.x: slower, the
// same sums; a bf16 at::mm would round them).
#pragma once

#include <torch/types.h>

namespace mixseq {

// Whether bf16_matmul_into calls oneDNN's bf16 GEMM directly in this process.
bool bf16_matmul_is_direct();

// c = a b, or c += a b when `accumulate`: a [M, K] and b [K, N] bf16, c [M, N] fp32, on the CPU,
// each with unit stride along one dimension (rows may lie apart, e.g. one time step of a
// [B, T, ·] tensor; a and b may be transposed views). Sums in fp32.
void bf16_matmul_into(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor& c, bool accumulate);

}  // namespace mixseq
