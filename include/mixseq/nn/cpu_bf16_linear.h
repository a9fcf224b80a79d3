// A linear layer's bf16 products on the CPU (bf16 inputs, or CPU autocast in bf16), forward and
// backward, in place of at::linear under autocast, for two reasons measured on AMX
// (docs/benchmarks.md, "bf16 and oneDNN's row split"):
//
// - oneDNN 2.6's bf16 matmul (Debian's LibTorch) splits some row counts badly between two
//   threads: [992, 256] x [256, 1024] takes 682 us on two threads against 447 us on one, where 960
//   and 1024 rows take 227-232 us; 992 rows is the bench's batch of 32 sentences x 31 positions.
//   About 7% of row counts above 1,000 do so; multiples of 64 did not (but for 3,840 of the 128 up
//   to 8,192). So on two or more threads the rows go as a block of a multiple of 64 and a block of
//   the rest, each written in place into one output.
// - Autocast's backward rounds every gradient to bf16 and casts it back to its input's fp32 (an
//   op, an allocation and a pass each). Here the fp32 gradients (a parameter's, an fp32 input's)
//   come out of oneDNN's bf16 GEMM with fp32 output (nn/bf16_matmul.h), which also does not split
//   992 rows badly; they are the bf16 operands' products summed in fp32, unrounded.
//
// The output is autocast's, bit for bit: bf16, the products of x and the weight rounded to bf16.
#pragma once

#include <torch/types.h>

namespace mixseq {

// Whether x's product with a linear layer's weight should come here: a bf16 product on the CPU
// (x bf16, or CPU autocast on in bf16), with gradients to compute or a row count that oneDNN
// splits badly (without gradients autocast's at::linear keeps its weights' bf16 copies).
bool takes_cpu_bf16_linear(const torch::Tensor& x);

// x [..., K], weight [N, K], bias [N] or undefined -> bf16 [..., N]. Differentiable; each gradient
// in its input's dtype.
torch::Tensor cpu_bf16_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

}  // namespace mixseq
