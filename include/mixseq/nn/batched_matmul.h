// batched_matmul: c[p, q] = a[p, q] b[p, q] over two batch dimensions, reading every matrix where
// it lies; the attention products of Transformer-XL (nn/relative_multihead_attention.h).
//
// Why not at::matmul: LibTorch's CPU bmm (Debian's, on OpenBLAS without MKL) wants its batch as
// one dimension, so attention's [B, T, H, Dh] projections are first copied into [B H, T, Dh];
// it then multiplies the matrices one after another, each through a select and a BLAS call that
// runs on one thread for matrices this small. Here every matrix is handed to BLAS in place (its
// row or column stride is BLAS's leading dimension), the P x Q products are spread over
// LibTorch's threads (each BLAS call on one), and the output is written in the memory order the
// caller asks for, so that no copy is needed after it either.
//
// That path runs on the CPU for fp32 and fp64 when mixseq was built with a CBLAS (OpenBLAS:
// MIXSEQ_WITH_CBLAS) and autocast is off; otherwise this is at::matmul (under bf16 autocast,
// LibTorch's bf16 kernels), with a contiguous output. Either way the values are those of
// at::matmul up to rounding, and the gradients are batched_matmul's too.
#pragma once

#include <torch/types.h>

#include <array>
#include <cstdint>

namespace mixseq {

// a [P, Q, M, K], b [P, Q, K, N] -> [P, Q, M, N]. `order` lists the output's dimensions from the
// slowest-varying in memory to the fastest; N must be last. {0, 1, 2, 3}: contiguous; {1, 2, 0, 3}:
// stored as [Q, M, P, N] (heads [H, B, T, Dh] written as [B, T, H, Dh]). Differentiable.
torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b,
                             const std::array<int64_t, 4>& order = {0, 1, 2, 3});

// Whether batched_matmul takes its own path for these operands.
bool batched_matmul_in_place(const torch::Tensor& a, const torch::Tensor& b);

// c = a b written into c [P, Q, M, N], any view whose matrices are row-major (stride 1 along N),
// without autograd; for hand-written backward passes. Needs batched_matmul_in_place(a, b).
void batched_matmul_into(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& c);

}  // namespace mixseq
