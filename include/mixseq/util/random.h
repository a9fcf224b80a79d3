// PortableRandom: draws that are the same on every platform and standard library
// (std::uniform_int_distribution and std::shuffle are not), so that a seed fixes a corpus,
// a batch order or a resumed run everywhere.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace mixseq {

class PortableRandom {
 public:
  explicit PortableRandom(uint64_t seed) : engine_(seed) {}

  // Uniform in [low, high], inclusive. Modulo bias is below 2^-40 for ranges under 2^24.
  int64_t uniform(int64_t low, int64_t high) {
    return low + static_cast<int64_t>(engine_() % static_cast<uint64_t>(high - low + 1));
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform_real() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Standard normal (Box-Muller), for Transformer-XL's variable segment lengths.
  double normal(double mean, double stddev);

  template <typename T>
  void shuffle(std::vector<T>& items) {  // Fisher-Yates
    for (int64_t i = static_cast<int64_t>(items.size()) - 1; i > 0; --i)
      std::swap(items[i], items[uniform(0, i)]);
  }

 private:
  std::mt19937_64 engine_;
};

// Mixes a base seed with extra values (epoch, rank, ...) into an independent stream's seed.
uint64_t derive_seed(uint64_t seed, uint64_t a, uint64_t b = 0);

}  // namespace mixseq
