// An fp32 LSTM layer's hidden-to-hidden matrix laid out for its per-step products h_{t-1} W_hhᵀ
// on AVX-512: the recurrence of nn/lstm_recurrence.h in fp32 without autocast.
//
// Why: a step multiplies a few rows by the same [H, 4H] matrix, and oneDNN's sgemm, called once a
// step, lays the matrix out again each time: at the LSTM language model's evaluation shape ([10,
// 200] x [200, 800]) it took 34 us on one thread and 22 us on two of the 2-core Zen 5 EPYC,
// where this layout's products take 21 us on one and 14 us a step on two (the threads kept in one
// parallel region over the sequence; docs/benchmarks.md). At [64, 1024] x [1024, 4096] it took
// 6.4 ms against 1.5 ms.
//
// Layout: the hidden units in panels of 16; a panel holds, for every k < H, the 16 units' rows of
// each gate (i, f, g, o), 64 floats: [panel][k][gate][16], zero beyond H. A panel's products for
// up to 6 rows stay in 24 of AVX-512's 32 registers, and each gate's 16 sums are contiguous units,
// so a thread that owns a range of panels owns whole units of the cell as well.
#pragma once

#include <cstdint>
#include <memory>

namespace mixseq {

class LstmHiddenPanels {
 public:
  static constexpr int64_t kUnits = 16;  // hidden units per panel

  // Whether the products run here: an x86-64 CPU with AVX-512F.
  static bool available();

  // For w_hh [4H, H] fp32, rows `row_stride` apart (column stride 1); packs nothing yet.
  LstmHiddenPanels(const float* w_hh, int64_t hidden, int64_t row_stride);

  int64_t panels() const { return (hidden_ + kUnits - 1) / kUnits; }

  // Lays out panels [begin, end); each thread of a recurrence packs the panels it multiplies by.
  void pack(int64_t begin, int64_t end);

  // For rows r < M and the units u of panels [begin, end) (each packed):
  //   out[r·ldo + q·H + u] += Σ_k a[r·lda + k] w_hh[q·H + u][k]   for the gates q = 0..3.
  void add_products(const float* a, int64_t lda, int64_t rows, int64_t begin, int64_t end, float* out,
                    int64_t ldo) const;

 private:
  const float* w_hh_;
  int64_t hidden_, row_stride_;
  std::unique_ptr<float[]> packed_;  // [panels][H][4][16]
};

}  // namespace mixseq
