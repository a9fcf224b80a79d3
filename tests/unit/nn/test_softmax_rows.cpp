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

// A row with a +inf gives +inf, one all -inf gives -inf, one with a NaN gives NaN.
void expect_rows_that_are_not_finite_stay_so(float (*log_sum_exp)(const float*, const float*, int64_t)) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> z{1.0f, 2.0f, 3.0f};
  std::vector<float> bias{0.0f, inf, 0.0f};
  EXPECT_EQ(log_sum_exp(z.data(), bias.data(), 3), inf);
  bias = {-inf, -inf, -inf};
  EXPECT_EQ(log_sum_exp(z.data(), bias.data(), 3), -inf);
  bias = {0.0f, std::nanf(""), 0.0f};
  EXPECT_TRUE(std::isnan(log_sum_exp(z.data(), bias.data(), 3)));
}

TEST(SoftmaxRows, BiasedLogSumExpMatchesDoublePrecisionAndTheStatisticsOfTheBiasedRowBitForBit) {
  at::manual_seed(4);
  for (const int64_t n : {1, 7, 16, 33, 2000}) {
    for (const double scale : {0.1, 5.0, 40.0}) {
      const auto z = random_row(n, scale), bias = random_row(n, scale);
      std::vector<float> biased(n), scratch(n);
      for (int64_t v = 0; v < n; ++v) biased[v] = z[v] + bias[v];
      double max = -INFINITY, total = 0.0;
      for (const float v : biased) max = std::max<double>(max, v);
      for (const float v : biased) total += std::exp(v - max);
      const double exact = max + std::log(total);
      const float ours = biased_log_sum_exp(z.data(), bias.data(), n);
      EXPECT_NEAR(ours, exact, 2e-6 * std::max(1.0, std::abs(exact))) << n << " " << scale;
      EXPECT_EQ(ours, softmax_row_stats(biased.data(), n, scratch.data()).log_sum_exp) << n << " " << scale;
      EXPECT_EQ(biased_log_sum_exp(z.data(), nullptr, n), softmax_row_stats(z.data(), n, scratch.data()).log_sum_exp)
          << n << " " << scale;
    }
  }
  // Rows that are not finite stay so, as softmax_row_stats has them.
  expect_rows_that_are_not_finite_stay_so(biased_log_sum_exp);
}

TEST(SoftmaxRows, BiasedLogSumExpInOneSweepMatchesDoublePrecisionAndKeepsNonFiniteRows) {
  at::manual_seed(5);
  for (const int64_t n : {1, 7, 16, 33, 2000, 10000}) {
    for (const double scale : {0.1, 5.0, 40.0}) {
      // Offsets beyond [-40, 60] take the shifted sweeps: unshifted, e^150 would overflow.
      for (const float offset : {0.0f, 150.0f, -150.0f, 55.0f}) {
        auto z = random_row(n, scale);
        const auto bias = random_row(n, scale);
        for (auto& v : z) v += offset;
        double max = -INFINITY, total = 0.0;
        for (int64_t v = 0; v < n; ++v) max = std::max<double>(max, z[v] + bias[v]);
        for (int64_t v = 0; v < n; ++v) total += std::exp(static_cast<double>(z[v] + bias[v]) - max);
        const double exact = max + std::log(total);
        EXPECT_NEAR(biased_log_sum_exp_in_one_sweep(z.data(), bias.data(), n), exact,
                    3e-6 * std::max(1.0, std::abs(exact)))
            << n << " " << scale << " " << offset;
        double unbiased_max = -INFINITY, unbiased_total = 0.0;
        for (const float v : z) unbiased_max = std::max<double>(unbiased_max, v);
        for (const float v : z) unbiased_total += std::exp(v - unbiased_max);
        const double unbiased = unbiased_max + std::log(unbiased_total);
        EXPECT_NEAR(biased_log_sum_exp_in_one_sweep(z.data(), nullptr, n), unbiased,
                    3e-6 * std::max(1.0, std::abs(unbiased)))
            << n << " " << scale << " " << offset;
      }
    }
  }
  expect_rows_that_are_not_finite_stay_so(biased_log_sum_exp_in_one_sweep);
  const std::vector<float> z{1.0f, 2.0f, 3.0f}, bias{0.0f, -std::numeric_limits<float>::infinity(), 0.0f};
  EXPECT_NEAR(biased_log_sum_exp_in_one_sweep(z.data(), bias.data(), 3), std::log(std::exp(1.0) + std::exp(3.0)),
              1e-6);  // one entry blocked: the other two
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


// masked_softmax_row: softmax(z + add) over the entries not blocked, blocked ones exactly 0, against
// double precision; every path (with and without add, with and without a mask).
TEST(SoftmaxRows, MaskedSoftmaxRowMatchesDoublePrecisionAndZeroesBlockedEntries) {
  at::manual_seed(2);
  for (const int64_t n : {1, 7, 16, 37, 2000}) {
    for (const bool with_add : {false, true}) {
      for (const bool with_mask : {false, true}) {
        const auto z = random_row(n, 5.0), add = random_row(n, 5.0);
        std::vector<char> blocked(n);
        for (int64_t v = 0; v < n; ++v) blocked[v] = with_mask && v > 0 && (v % 3 == 1 || v > n - n / 4);
        double max = -INFINITY;
        std::vector<double> exact(n);
        for (int64_t v = 0; v < n; ++v)
          if (!blocked[v]) max = std::max(max, static_cast<double>(z[v]) + (with_add ? add[v] : 0.0));
        double total = 0.0;
        for (int64_t v = 0; v < n; ++v) {
          exact[v] = blocked[v] ? 0.0 : std::exp(static_cast<double>(z[v]) + (with_add ? add[v] : 0.0) - max);
          total += exact[v];
        }
        std::vector<float> mask(n);
        for (int64_t v = 0; v < n; ++v) mask[v] = blocked[v] ? -INFINITY : 0.0f;
        auto p = z;
        masked_softmax_row(p.data(), with_add ? add.data() : nullptr, with_mask ? mask.data() : nullptr, n);
        for (int64_t v = 0; v < n; ++v) {
          if (blocked[v]) {
            EXPECT_EQ(p[v], 0.0f) << n << " " << v;
          } else {
            EXPECT_NEAR(p[v], exact[v] / total, 4e-6 * exact[v] / total + 1e-30) << n << " " << with_add << " " << v;
          }
        }
      }
    }
  }
}

TEST(SoftmaxRows, MaskedSoftmaxRowIsNaNWhereAtSoftmaxIs) {
  const float all[3] = {-INFINITY, -INFINITY, -INFINITY};
  std::vector<float> z = {1.0f, 2.0f, 3.0f};
  masked_softmax_row(z.data(), nullptr, all, 3);  // nothing left to attend to
  for (const float p : z) EXPECT_TRUE(std::isnan(p));
  const auto reference = at::softmax(at::tensor({1.0f, std::numeric_limits<float>::quiet_NaN(), 3.0f}), 0);
  z = {1.0f, std::numeric_limits<float>::quiet_NaN(), 3.0f};
  masked_softmax_row(z.data(), nullptr, nullptr, 3);
  for (int v = 0; v < 3; ++v) EXPECT_EQ(std::isnan(z[v]), std::isnan(reference[v].item<float>())) << v;
  z = {1.0f, std::numeric_limits<float>::infinity(), 3.0f};
  masked_softmax_row(z.data(), nullptr, nullptr, 3);
  const auto with_inf = at::softmax(at::tensor({1.0f, std::numeric_limits<float>::infinity(), 3.0f}), 0);
  for (int v = 0; v < 3; ++v) EXPECT_EQ(std::isnan(z[v]), std::isnan(with_inf[v].item<float>())) << v;
}

}  // namespace
}  // namespace mixseq
