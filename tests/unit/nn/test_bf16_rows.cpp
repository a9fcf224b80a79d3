// nn/bf16_rows.h against LibTorch's own bf16 conversions: rounding ties to even, NaN, infinities,
// lengths shorter than a vector and with tails.
#include "mixseq/nn/bf16_rows.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace mixseq {
namespace {

TEST(Bf16Rows, WidenAndNarrowEqualLibTorchsConversions) {
  at::manual_seed(2);
  for (const int64_t n : {1, 15, 17, 1000}) {
    auto values = at::randn({n}) * 100.0;
    if (n > 4) {  // a NaN, infinities and an exact tie between two bf16 values (rounds to even)
      values[0] = std::numeric_limits<float>::quiet_NaN();
      values[1] = std::numeric_limits<float>::infinity();
      values[2] = -std::numeric_limits<float>::infinity();
      values[3] = 1.0f + 1.0f / 256;  // halfway between bf16's 1 and 1 + 2^-7
    }
    const auto expected = values.to(at::kBFloat16);
    auto narrowed = at::empty({n}, at::kBFloat16);
    narrow_row(values.data_ptr<float>(), n, narrowed.data_ptr<c10::BFloat16>());
    const int64_t first_number = n > 4 ? 1 : 0;  // NaN payloads may differ: compared as NaN
    EXPECT_TRUE(
        at::equal(narrowed.slice(0, first_number).view(at::kShort), expected.slice(0, first_number).view(at::kShort)))
        << n;
    if (n > 4) {
      EXPECT_TRUE(std::isnan(narrowed[0].item<float>()));
    }

    auto widened = at::empty({n});
    widen_row(expected.data_ptr<c10::BFloat16>(), n, widened.data_ptr<float>());
    EXPECT_TRUE(at::equal(widened.view(at::kInt), expected.to(at::kFloat).view(at::kInt))) << n;
  }
}

}  // namespace
}  // namespace mixseq
