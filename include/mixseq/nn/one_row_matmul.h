// Matrix products whose left side has one row, as a decoding step makes them: a [..., 1, K]
// query or weight row against [..., K, N].
//
// LibTorch's fp32 CPU bmm (at::native::bmm_out_or_baddbmm_) makes one small product per matrix
// of the batch, so a beam step's B·K·H one-row products cost more in calls than in arithmetic
// (two thirds of a Transformer beam search). Here, with nothing for autograd to record, one pass
// over the batch sums each output in registers: along the matrix's rows where they are
// contiguous, as dot products where its columns are (a transposed matrix, as keys are for a
// query's scores). Before, a broadcast product and a sum wrote and read a [..., K, N] temporary:
// GNMT's attention context, [80, 1, 30] x [80, 30, 256] at the beam bench shape, took 3% of its
// beam search so (docs/benchmarks.md). With a gradient to keep, that broadcast product and sum
// remain. bf16 products go to oneDNN in one call, 2-4x faster than the broadcast there, and GPUs
// batch them: both keep at::matmul.
#pragma once

#include <torch/types.h>

namespace mixseq {

// Whether `row` ([..., 1, K]) takes the broadcast path: one row, fp32, on the CPU.
bool uses_broadcast_row_product(const torch::Tensor& row);

// row [..., 1, K] @ matrix [..., K, N] -> [..., 1, N] (batch dimensions broadcast as at::matmul
// broadcasts them), equal to at::matmul up to rounding; a left side of several rows ([..., T, K])
// goes to at::matmul.
torch::Tensor one_row_matmul(const torch::Tensor& row, const torch::Tensor& matrix);

}  // namespace mixseq
