// A bf16 linear layer on the CPU computed in row blocks that oneDNN shares well between threads.
//
// oneDNN 2.6's bf16 product (Debian's LibTorch, AMX) splits some row counts badly between two
// threads: [992, 256] x [256, 1024] takes 682 us on two threads against 447 us on one, where 960
// and 1024 rows take 227-232 us; 992 rows is the bench's batch of 32 sentences x 31 positions
// (docs/benchmarks.md, "bf16 and oneDNN's row split"). About 7% of row counts above 1,000 do so;
// multiples of 64 did not, but for 3,840 of the 128 up to 8,192. Here the rows are multiplied as
// a block of a multiple of 64 and a block of the rest, each written in place into one output, the
// same for the input gradient; the weight gradient, whose rows are the outputs, is one product.
// No padding: padding the rows instead cost a copy and a zero fill of every input and gradient.
#pragma once

#include <torch/types.h>

namespace mixseq {

// Whether x's product should take bf16_row_block_linear: a bf16 product (x bf16, or CPU
// autocast in bf16) on the CPU with two or more threads, of at least 256 rows, not a multiple of 64.
bool takes_bf16_row_blocks(const torch::Tensor& x);

// x [..., K], weight [N, K], bias [N] or undefined -> bf16 [..., N]: at::linear's values and
// gradients under bf16 autocast (the gradients in the inputs' own dtypes). Differentiable.
torch::Tensor bf16_row_block_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

}  // namespace mixseq
