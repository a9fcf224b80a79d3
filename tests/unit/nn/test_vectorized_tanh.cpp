// vectorized_tanh_in_place against std::tanh in double over the whole float range that matters,
// saturation, NaN, and lengths that leave a tail after the vector loop; vectorized_tanh_dots
// against the same tanh element by element and against a double-precision sum.
#include "mixseq/nn/vectorized_tanh.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace mixseq {
namespace {

TEST(VectorizedTanh, IsWithinAFewUlpsOfTanhEverywhere) {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 1.0f / 1024) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-6f, 3e-5f, -2e-3f, 20.0f, -88.0f, 1e30f, -1e30f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()})
    x.push_back(v);
  std::vector<float> y = x;
  vectorized_tanh_in_place(y.data(), static_cast<int64_t>(y.size()));
  double worst = 0.0, worst_relative = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double exact = std::tanh(static_cast<double>(x[i]));
    worst = std::max(worst, std::abs(y[i] - exact));
    if (exact != 0.0) worst_relative = std::max(worst_relative, std::abs(y[i] - exact) / std::abs(exact));
  }
  EXPECT_LT(worst, 2e-7);
  EXPECT_LT(worst_relative, 4e-7);  // also near 0: tanh(1e-30) is not rounded to 0 or to 1e-7
  EXPECT_GT(worst, 0.0);            // an approximation, not std::tanh: the bounds above are what it promises
  EXPECT_EQ(y[y.size() - 2], 1.0f);
  EXPECT_EQ(y[y.size() - 1], -1.0f);
}

TEST(VectorizedTanh, KeepsNanAndTouchesOnlyNElements) {
  for (int64_t n : {1, 7, 33}) {  // shorter than a vector, and with tails
    std::vector<float> x(n + 1, 0.5f);
    x[0] = std::numeric_limits<float>::quiet_NaN();
    vectorized_tanh_in_place(x.data(), n);
    EXPECT_TRUE(std::isnan(x[0]));
    for (int64_t i = 1; i < n; ++i) EXPECT_NEAR(x[i], std::tanh(0.5), 2e-7);
    EXPECT_EQ(x[n], 0.5f);
  }
}

// With v = e_j the sum has one non-zero term, so each score is exactly the j-th element of
// vectorized_tanh_in_place(query + key): the dots take the same tanh, in the vector loop and in
// the tail alike (n = 37: two vectors and five more).
TEST(VectorizedTanhDots, TakeTheSameTanhAsTheInPlaceLoop) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (const int64_t n : {5, 16, 37, 256}) {
    const int64_t rows = 3;
    std::vector<float> query(n), keys(rows * n);
    for (auto& x : query) x = normal(rng);
    for (auto& x : keys) x = normal(rng);
    for (int64_t j = 0; j < n; ++j) {
      std::vector<float> v(n, 0.0f), out(rows + 1, -5.0f);
      v[j] = 1.0f;
      vectorized_tanh_dots(query.data(), keys.data(), rows, v.data(), n, out.data());
      for (int64_t r = 0; r < rows; ++r) {
        float hidden = query[j] + keys[r * n + j];
        vectorized_tanh_in_place(&hidden, 1);
        EXPECT_EQ(out[r], hidden) << "n " << n << " row " << r << " element " << j;
      }
      EXPECT_EQ(out[rows], -5.0f);  // nothing written past the rows
    }
  }
}

TEST(VectorizedTanhDots, AgreeWithADoublePrecisionSum) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  for (const int64_t n : {1, 17, 64, 300}) {
    const int64_t rows = 5;
    std::vector<float> query(n), keys(rows * n), v(n), out(rows);
    for (auto& x : query) x = normal(rng);
    for (auto& x : keys) x = normal(rng);
    for (auto& x : v) x = normal(rng);
    vectorized_tanh_dots(query.data(), keys.data(), rows, v.data(), n, out.data());
    for (int64_t r = 0; r < rows; ++r) {
      double exact = 0.0, magnitude = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const double term = v[i] * std::tanh(static_cast<double>(query[i] + keys[r * n + i]));
        exact += term;
        magnitude += std::abs(term);
      }
      EXPECT_NEAR(out[r], exact, 1e-6 * magnitude + 1e-30) << "n " << n << " row " << r;
    }
  }
}

}  // namespace
}  // namespace mixseq
