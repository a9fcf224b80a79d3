#include "nn/lstm_hidden_panels.h"

#include <algorithm>
#include <cstring>

namespace mixseq {

// AVX-512 for the products where the compiler can target it (chosen at run time: available()).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MIXSEQ_PANELS_TARGET __attribute__((target("avx512f")))
#else
#define MIXSEQ_PANELS_TARGET
#endif

namespace {

constexpr int64_t kUnits = LstmHiddenPanels::kUnits;
constexpr int64_t kPanelColumns = 4 * kUnits;  // a panel's row at one k: 16 units of each gate
constexpr int kMaxRows = 6;                    // rows per block: 6 x 4 accumulators of AVX-512's 32

typedef float Vec16 __attribute__((vector_size(64), aligned(4)));  // 16 floats, unaligned access

// out rows [0, R) (+)= a rows [0, R) times one panel (`w`: [K][4][16]); `units` of the panel's 16
// are real (the rest pad the last panel); gate q's sums go to out[q·H + unit].
template <int R>
__attribute__((always_inline)) inline void panel_block(const float* __restrict w, const float* __restrict a,
                                                      int64_t lda, int64_t K, float* __restrict out, int64_t ldo,
                                                      int64_t hidden, int64_t units) {
  Vec16 acc[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) acc[r][q] = Vec16{};
  for (int64_t k = 0; k < K; ++k) {
    const Vec16* wk = reinterpret_cast<const Vec16*>(w + k * kPanelColumns);
    const Vec16 w0 = wk[0], w1 = wk[1], w2 = wk[2], w3 = wk[3];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const float x = a[r * lda + k];
      acc[r][0] += x * w0;
      acc[r][1] += x * w1;
      acc[r][2] += x * w2;
      acc[r][3] += x * w3;
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      float* o = out + r * ldo + q * hidden;
      if (units == kUnits) {
        *reinterpret_cast<Vec16*>(o) += acc[r][q];
      } else {
        float lanes[kUnits];
        std::memcpy(lanes, &acc[r][q], sizeof lanes);
        for (int64_t u = 0; u < units; ++u) o[u] += lanes[u];
      }
    }
}

MIXSEQ_PANELS_TARGET void add_panel_products(const float* packed, int64_t hidden, const float* a,
                                                            int64_t lda, int64_t rows, int64_t begin, int64_t end,
                                                            float* out, int64_t ldo) {
  for (int64_t p = begin; p < end; ++p) {
    const float* w = packed + p * hidden * kPanelColumns;
    const int64_t first = p * kUnits, units = std::min(kUnits, hidden - first);
    float* o = out + first;
    int64_t r = 0;
    for (; r + kMaxRows <= rows; r += kMaxRows)
      panel_block<kMaxRows>(w, a + r * lda, lda, hidden, o + r * ldo, ldo, hidden, units);
    switch (rows - r) {
      case 5: panel_block<5>(w, a + r * lda, lda, hidden, o + r * ldo, ldo, hidden, units); break;
      case 4: panel_block<4>(w, a + r * lda, lda, hidden, o + r * ldo, ldo, hidden, units); break;
      case 3: panel_block<3>(w, a + r * lda, lda, hidden, o + r * ldo, ldo, hidden, units); break;
      case 2: panel_block<2>(w, a + r * lda, lda, hidden, o + r * ldo, ldo, hidden, units); break;
      case 1: panel_block<1>(w, a + r * lda, lda, hidden, o + r * ldo, ldo, hidden, units); break;
      default: break;
    }
  }
}

}  // namespace

bool LstmHiddenPanels::available() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

void LstmHiddenPanels::add_products(const float* a, int64_t lda, int64_t rows, int64_t begin, int64_t end,
                                    float* out, int64_t ldo) const {
  add_panel_products(packed_.get(), hidden_, a, lda, rows, begin, end, out, ldo);
}

LstmHiddenPanels::LstmHiddenPanels(const float* w_hh, int64_t hidden, int64_t row_stride)
    : w_hh_(w_hh),
      hidden_(hidden),
      row_stride_(row_stride),
      packed_(new float[static_cast<size_t>(panels() * hidden * 4 * kUnits)]) {}  // written by pack()

void LstmHiddenPanels::pack(int64_t begin, int64_t end) {
  const int64_t H = hidden_;
  for (int64_t p = begin; p < end; ++p) {
    float* panel = packed_.get() + p * H * 4 * kUnits;
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t u = 0; u < kUnits; ++u) {
        const int64_t unit = p * kUnits + u;
        float* column = panel + q * kUnits + u;  // then 64 floats per k
        if (unit >= H) {
          for (int64_t k = 0; k < H; ++k) column[k * 4 * kUnits] = 0.0f;
          continue;
        }
        const float* row = w_hh_ + (q * H + unit) * row_stride_;
        for (int64_t k = 0; k < H; ++k) column[k * 4 * kUnits] = row[k];
      }
  }
}

}  // namespace mixseq
