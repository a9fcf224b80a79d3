#include "mixseq/util/random.h"

#include <cmath>

namespace mixseq {

double PortableRandom::normal(double mean, double stddev) {
  const double u1 = 1.0 - uniform_real();  // (0, 1]: log stays finite
  const double u2 = uniform_real();
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

namespace {
uint64_t splitmix64(uint64_t x) {  // Steele et al. 2014, the SplitMix64 finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t derive_seed(uint64_t seed, uint64_t a, uint64_t b) {
  return splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b);
}

}  // namespace mixseq
