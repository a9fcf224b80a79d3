// Products of bf16 matrices into fp32 results, for the recurrences' products under bf16 autocast
// (nn/lstm_recurrence.h, nn/gru_recurrence.h); and fp32 products through the same library's
// sgemm, for their per-step products in fp32.
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

// Whether float_matmul_into calls oneDNN's sgemm directly in this process.
bool float_matmul_is_direct();

// The same for fp32 a, b and c, through oneDNN's dnnl_sgemm where the process has it, else
// at::mm (also where ATEN_CPU_CAPABILITY=default holds ATen to its baseline kernels). Why: at an
// LSTM step's shape, [B = 10, 200] x [200, 800], OpenBLAS's sgemm (through at::mm) took 65 us and
// dnnl_sgemm 26 us on a 2-core Zen 4, both on 2 threads (docs/benchmarks.md).
void float_matmul_into(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor& c, bool accumulate);

// c [M, N] = a b for row-major fp32 matrices by pointer (a is [M, K] with rows lda apart, or
// where `ta` its transpose stored [K, M]; b likewise), through oneDNN's sgemm; false, nothing
// written, where float_matmul_is_direct() is not. For one thread's products inside a parallel
// loop (oneDNN's sgemm runs on the calling thread there): nn/batched_matmul.h's attention
// products. The caller holds util/stop_request.h's StopSignalsHeld around the loop (see
// float_matmul_into).
bool direct_float_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                       const float* b, int64_t ldb, float* c, int64_t ldc);

// a [M, K] b [K, N] -> [M, N] as at::matmul. fp32 CPU operands with no gradient to record and
// autocast off go through float_matmul_into: a language model's output layer in evaluation,
// [350, 200] x [200, 10,000], took 9.7 ms through at::mm and 7.7 ms through dnnl_sgemm on a
// 2-core Zen 4. Anything else is at::matmul.
torch::Tensor float_matmul(const torch::Tensor& a, const torch::Tensor& b);

// a [M, K] b [K, N] -> [M, N] for the recurrences' products after their loops (weight and input
// gradients, the input products): bf16 operands summed straight into fp32 through
// bf16_matmul_into, fp32 ones through float_matmul(_into), anything else (fp64 in the gradient
// checks) as at::mm. When `into` is defined ([M, N], fp32 for bf16 operands, else the operands'
// dtype) the product is added to it in place and it is returned.
torch::Tensor widening_matmul(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor into = {});

}  // namespace mixseq
