#include "mixseq/nn/bf16_rows.h"

#include <cstring>

#include "util/vector_clones.h"

namespace mixseq {
namespace {

MIXSEQ_VECTOR_CLONES
void widen_loop(const uint16_t* bits, int64_t n, float* out) {
  for (int64_t v = 0; v < n; ++v) {
    const uint32_t widened = static_cast<uint32_t>(bits[v]) << 16;  // bf16 is fp32's upper half
    std::memcpy(out + v, &widened, sizeof widened);
  }
}

MIXSEQ_VECTOR_CLONES
void narrow_loop(const float* in, int64_t n, uint16_t* bits) {
  for (int64_t v = 0; v < n; ++v) {
    uint32_t u;
    std::memcpy(&u, in + v, sizeof u);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    bits[v] = static_cast<uint16_t>(in[v] != in[v] ? 0x7fc0u : rounded);  // NaN stays a quiet NaN
  }
}

}  // namespace

void widen_row(const c10::BFloat16* in, int64_t n, float* out) {
  widen_loop(reinterpret_cast<const uint16_t*>(in), n, out);
}

void narrow_row(const float* in, int64_t n, c10::BFloat16* out) {
  narrow_loop(in, n, reinterpret_cast<uint16_t*>(out));
}

}  // namespace mixseq
