// A bf16 matrix B [K, N] packed once for many products c = a B of few rows, run on AMX tiles:
// the per-step products of the recurrences under bf16 autocast (nn/gru_recurrence.h,
// nn/lstm_recurrence.h), where every step multiplies a new [B, K] state by the same weight matrix.
//
// Why: at DeepSpeech2's bench shape a step's [8, 256] x [256, 768] product took 20 us through
// oneDNN's dnnl_gemm_bf16bf16f32 on one core of the AMX Xeon (family 6 model 207), no faster than
// its fp32 sgemm (19 us), though bf16 products of 1024^3 ran at 2.6-6.4x fp32's rate there
// (bench/matmul_precision_bench, one thread, three runs): each call lays the weight matrix out
// for the tiles again (393 KB) to multiply 8 rows by it. Packed once per sequence, a step only
// loads the tiles: 9 us, and 5 us for the backward's [8, 768] x [768, 256] (docs/benchmarks.md).
//
// Layout: B's rows in pairs (AMX's VNNI order), cut into tiles of 32 rows by 16 columns, 1 KB each,
// K-block by K-block. The products sum in fp32 in the tiles (the same sums as oneDNN's bf16 GEMM,
// in another order).
#pragma once

#include <torch/types.h>

#include <vector>

namespace mixseq {

class PackedBf16Matrix {
 public:
  // Whether this process may run AMX tiles: the CPU has AMX-TILE and AMX-BF16 and Linux granted
  // the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM; asked once).
  static bool available();
  // Whether a [K, N] matrix can be packed: K a multiple of 32, N of 16 (anything else: use
  // nn/bf16_matmul.h).
  static bool fits(int64_t k, int64_t n) { return k > 0 && n > 0 && k % 32 == 0 && n % 16 == 0; }

  // b packed where it is bf16 and available() and fits() allow it; else an empty matrix (rows()
  // 0), for which the caller keeps its own product (the recurrences: nn/bf16_matmul.h).
  static PackedBf16Matrix where_possible(const torch::Tensor& b);

  PackedBf16Matrix() = default;
  // b [K, N] bf16 on the CPU, any strides; requires available() and fits(K, N).
  explicit PackedBf16Matrix(const torch::Tensor& b);

  int64_t rows() const { return k_; }
  int64_t cols() const { return n_; }

  // c = a B, or c += a B when `accumulate`: a [M, K] bf16 with unit column stride (rows may lie
  // apart), c [M, N] fp32 with unit column stride; any M >= 1. Column blocks are shared among
  // LibTorch's threads where a product has at least about 2 M multiply-adds per thread; inside a
  // parallel region (a GRU direction's own thread) it runs on the calling thread.
  void multiply_into(const torch::Tensor& a, torch::Tensor& c, bool accumulate = false) const;

 private:
  int64_t k_ = 0, n_ = 0;
  std::vector<uint16_t> tiles_;  // [K / 32][N / 16][16 row pairs][16 columns][2]
};

}  // namespace mixseq
