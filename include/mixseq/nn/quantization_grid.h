// QuantizationGrid: the affine integer grid of post-training quantization (Jacob et al. 2018,
// §2.1): real = scale · (q − zero_point) with integer q in [qmin, qmax]. One scale for a whole
// tensor, or one per output channel (row 0 of a weight matrix).
//
//   symmetric   zero_point 0, q in [−(2^(bits−1) − 1), 2^(bits−1) − 1], scale = max|x| / qmax:
//               no zero-point arithmetic, what int8 weights need (the oneDNN engine requires it)
//   asymmetric  q in [0, 2^bits − 1], the range [min, max] stretched to include 0 so that 0 is
//               exact (padding, ReLU zeros), zero_point = round(−min / scale)
//
// Grids are plain data; nn/quantizable_linear.h runs them, quant/ decides them.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace mixseq {

struct QuantizationGrid {
  torch::Tensor scale;       // fp32, [] per tensor or [N] per output channel; undefined: no grid
  torch::Tensor zero_point;  // int64, shaped as scale
  int64_t qmin = 0;          // smallest integer on the grid
  int64_t qmax = 0;          // largest integer on the grid

  bool defined() const { return scale.defined(); }
  bool per_channel() const { return scale.dim() == 1; }
  bool symmetric() const { return qmin == -qmax; }
};

// The grid of `bits` (2..16) integers covering [min, max]; min and max are [] (per tensor) or
// [N] (per channel), as computed by the caller. A range of width 0 gets scale 1 (nothing to
// resolve, and no division by zero).
QuantizationGrid make_quantization_grid(const torch::Tensor& min, const torch::Tensor& max, int64_t bits,
                                        bool symmetric);

// x rounded to the grid and back ("fake quantization", Jacob et al. 2018, §3): x [N, ...] for a
// per-channel grid, any shape for a per-tensor one; values outside the grid's range clamp to its
// ends. Rounds half to even, as ATen's quantize_per_tensor does.
torch::Tensor quantize_dequantize(const torch::Tensor& x, const QuantizationGrid& grid);

}  // namespace mixseq
