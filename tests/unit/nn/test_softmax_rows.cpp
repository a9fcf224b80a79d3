// The row kernels of nn/softmax_rows.h against double-precision references, over lengths that
// leave tails after the 16-lane loops.
#include "mixseq/nn/softmax_rows.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace mixseq {
namespace {

std::vector<float> random_row(int64_t n, double scale) {
  const auto row = (scale * at::randn({n})).contiguous();
  return {row.data_ptr<float>(), row.data_ptr<float>() + n};
}

TEST(SoftmaxRows, StatisticsAndSoftmaxMatchDoublePrecision) {
  at::manual_seed(1);
  for (const int64_t n : {1, 7, 16, 33, 2000}) {
    for (const double scale : {0.1, 5.0, 40.0}) {
      const auto z = random_row(n, scale);
      double max = -INFINITY, sum = 0.0, total = 0.0;
      for (const float v : z) max = std::max<double>(max, v), sum += v;
      for (const float v : z) total += std::exp(v - max);
      const double log_sum_exp = max + std::log(total);

      std::vector<float> scratch(n), p(n);
      const auto stats = softmax_row_stats(z.data(), n, scratch.data());
      EXPECT_NEAR(stats.log_sum_exp, log_sum_exp, 2e-6 * std::max(1.0, std::abs(log_sum_exp))) << n << " " << scale;
      EXPECT_NEAR(stats.sum, sum, 1e-5 * (std::abs(sum) + scale * n)) << n << " " << scale;
      softmax_row(z.data(), n, stats.log_sum_exp, p.data());
      double p_total = 0.0;
      for (int64_t v = 0; v < n; ++v) {
        const double exact = std::exp(z[v] - log_sum_exp);
        EXPECT_NEAR(p[v], exact, 4e-6 * exact + 1e-30) << n << " " << scale << " " << v;
        p_total += p[v];
      }
      EXPECT_NEAR(p_total, 1.0, 1e-5);
    }
  }
}

TEST(SoftmaxRows, VeryNegativeExponentsGiveTinyProbabilitiesAndNanPropagates) {
  std::vector<float> z = {0.0f, -200.0f, -1e30f};
  std::vector<float> scratch(3), p(3);
  const auto stats = softmax_row_stats(z.data(), 3, scratch.data());
  EXPECT_NEAR(stats.log_sum_exp, 0.0f, 1e-6);
  softmax_row(z.data(), 3, stats.log_sum_exp, p.data());
  EXPECT_NEAR(p[0], 1.0f, 1e-6);
  EXPECT_LE(p[1], 2e-38f);  // exp(-87), the floor of the range reduction, not 0
  EXPECT_LE(p[2], 2e-38f);

  z[1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(softmax_row_stats(z.data(), 3, scratch.data()).log_sum_exp));
}

}  // namespace
}  // namespace mixseq
