#include "mixseq/nn/packed_bf16_matrix.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define MIXSEQ_HAS_AMX_CODE 1
#endif

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

#ifdef MIXSEQ_HAS_AMX_CODE
constexpr long kArchReqXcompPerm = 0x1023;  // arch_prctl: ask for an extended state component
constexpr long kXfeatureXtiledata = 18;     // the AMX tile data

bool cpu_and_os_allow_amx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amx_bf16 = (edx >> 22) & 1, amx_tile = (edx >> 24) & 1;
  if (!amx_bf16 || !amx_tile) return false;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

// ldtilecfg's 64-byte operand, palette 1.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0-3: four 16-column blocks of c (m rows); 4: a's 32 columns of one K-block (m rows);
// 5-7: B's tiles (16 row pairs).
TileConfig tile_config_for(int m) {
  TileConfig config;
  for (int t = 0; t < 5; ++t) config.colsb[t] = 64, config.rows[t] = static_cast<uint8_t>(m);
  for (int t = 5; t < 8; ++t) config.colsb[t] = 64, config.rows[t] = 16;
  return config;
}

// c[0:m, 16 j : 16 (j + blocks)] (+)= a[0:m, :] B over `blocks` (1-4) column blocks starting at j.
__attribute__((target("amx-tile,amx-bf16"))) void multiply_tile_blocks(const uint16_t* a, int64_t a_stride,
                                                                    const uint16_t* tiles, int64_t k_blocks,
                                                                    int64_t n_blocks, int64_t j, int blocks,
                                                                    float* c, int64_t c_stride, bool accumulate) {
  const int64_t stride = c_stride * 4;
  if (accumulate) {
    _tile_loadd(0, c + j * 16, stride);
    if (blocks > 1) _tile_loadd(1, c + (j + 1) * 16, stride);
    if (blocks > 2) _tile_loadd(2, c + (j + 2) * 16, stride);
    if (blocks > 3) _tile_loadd(3, c + (j + 3) * 16, stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int64_t kb = 0; kb < k_blocks; ++kb) {
    const uint16_t* b = tiles + (kb * n_blocks + j) * 512;  // 512 bf16 a tile
    _tile_loadd(4, a + kb * 32, a_stride * 2);
    _tile_loadd(5, b, 64);
    _tile_dpbf16ps(0, 4, 5);
    if (blocks > 1) {
      _tile_loadd(6, b + 512, 64);
      _tile_dpbf16ps(1, 4, 6);
    }
    if (blocks > 2) {
      _tile_loadd(7, b + 1024, 64);
      _tile_dpbf16ps(2, 4, 7);
    }
    if (blocks > 3) {
      _tile_loadd(5, b + 1536, 64);
      _tile_dpbf16ps(3, 4, 5);
    }
  }
  _tile_stored(0, c + j * 16, stride);
  if (blocks > 1) _tile_stored(1, c + (j + 1) * 16, stride);
  if (blocks > 2) _tile_stored(2, c + (j + 2) * 16, stride);
  if (blocks > 3) _tile_stored(3, c + (j + 3) * 16, stride);
}

// Column groups [group_begin, group_end) of four blocks each, every row, on the calling thread.
__attribute__((target("amx-tile,amx-bf16"))) void multiply_on_tiles(const uint16_t* a, int64_t a_stride, int64_t m,
                                                             const uint16_t* tiles, int64_t k, int64_t n, float* c,
                                                             int64_t c_stride, bool accumulate, int64_t group_begin,
                                                             int64_t group_end) {
  const int64_t k_blocks = k / 32, n_blocks = n / 16;
  for (int64_t r = 0; r < m; r += 16) {
    const int rows = static_cast<int>(m - r < 16 ? m - r : 16);
    const TileConfig config = tile_config_for(rows);
    _tile_loadconfig(&config);
    for (int64_t group = group_begin; group < group_end; ++group) {
      const int64_t j = group * 4;
      multiply_tile_blocks(a + r * a_stride, a_stride, tiles, k_blocks, n_blocks, j,
                      static_cast<int>(n_blocks - j < 4 ? n_blocks - j : 4), c + r * c_stride, c_stride, accumulate);
    }
  }
  _tile_release();
}
#endif

}  // namespace

bool PackedBf16Matrix::available() {
#ifdef MIXSEQ_HAS_AMX_CODE
  static const bool allowed = cpu_and_os_allow_amx();
  return allowed;
#else
  return false;
#endif
}

PackedBf16Matrix PackedBf16Matrix::where_possible(const torch::Tensor& b) {
  if (b.dim() != 2 || b.scalar_type() != at::kBFloat16 || !b.device().is_cpu() || !available() ||
      !fits(b.size(0), b.size(1)))
    return {};
  return PackedBf16Matrix(b);
}

PackedBf16Matrix::PackedBf16Matrix(const torch::Tensor& b) {
  MIXSEQ_CHECK(b.dim() == 2 && b.scalar_type() == at::kBFloat16 && b.device().is_cpu(),
               "PackedBf16Matrix: needs a 2-D bf16 CPU matrix, not ", b.sizes(), " ", b.scalar_type());
  k_ = b.size(0);
  n_ = b.size(1);
  MIXSEQ_CHECK(fits(k_, n_), "PackedBf16Matrix: [", k_, ", ", n_, "] is not [32 k, 16 n]");
  MIXSEQ_CHECK(available(), "PackedBf16Matrix: this CPU or process cannot run AMX tiles");
  const auto bits = b.contiguous();
  const auto* p = reinterpret_cast<const uint16_t*>(bits.data_ptr<at::BFloat16>());
  tiles_.resize(static_cast<size_t>(k_ * n_));
  const int64_t n_blocks = n_ / 16;
  for (int64_t kb = 0; kb < k_ / 32; ++kb)
    for (int64_t nb = 0; nb < n_blocks; ++nb) {
      uint16_t* tile = tiles_.data() + (kb * n_blocks + nb) * 512;
      for (int64_t pair = 0; pair < 16; ++pair)
        for (int64_t col = 0; col < 16; ++col)
          for (int64_t e = 0; e < 2; ++e)
            tile[(pair * 16 + col) * 2 + e] = p[(kb * 32 + pair * 2 + e) * n_ + nb * 16 + col];
    }
}

void PackedBf16Matrix::multiply_into(const torch::Tensor& a, torch::Tensor& c, bool accumulate) const {
  MIXSEQ_CHECK(!tiles_.empty(), "PackedBf16Matrix: multiply_into on an empty matrix");
  MIXSEQ_CHECK(a.dim() == 2 && a.scalar_type() == at::kBFloat16 && a.size(1) == k_ && a.stride(1) == 1 &&
                   a.size(0) >= 1,
               "PackedBf16Matrix: a must be [M, ", k_, "] bf16 with unit column stride, not ", a.sizes());
  MIXSEQ_CHECK(c.dim() == 2 && c.scalar_type() == at::kFloat && c.size(0) == a.size(0) && c.size(1) == n_ &&
                   c.stride(1) == 1,
               "PackedBf16Matrix: c must be [", a.size(0), ", ", n_, "] fp32 with unit column stride, not ",
               c.sizes());
#ifdef MIXSEQ_HAS_AMX_CODE
  const auto* pa = reinterpret_cast<const uint16_t*>(a.data_ptr<at::BFloat16>());
  float* pc = c.data_ptr<float>();
  const int64_t m = a.size(0), groups = (n_ / 16 + 3) / 4;
  // Column groups split across threads where the product is worth it (outside a parallel region;
  // inside one, e.g. a GRU direction's own thread, at::parallel_for runs it inline).
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 21) / std::max<int64_t>(1, m * k_ * 64));
  at::parallel_for(0, groups, grain, [&](int64_t begin, int64_t end) {
    multiply_on_tiles(pa, a.stride(0), m, tiles_.data(), k_, n_, pc, c.stride(0), accumulate, begin, end);
  });
#endif
}

}  // namespace mixseq
