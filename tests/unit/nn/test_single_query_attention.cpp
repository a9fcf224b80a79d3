#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mixseq/nn/incremental_key_value_cache.h"
#include "mixseq/nn/key_value_cache.h"
#include "mixseq/nn/scaled_dot_product_attention.h"
#include "mixseq/nn/single_query_attention.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// [B, H, S, Dh] keys of row b at position j taken from stored row rows[b, j].
at::Tensor gathered(const at::Tensor& stored, const at::Tensor& rows, int64_t length) {
  std::vector<at::Tensor> per_row;
  for (int64_t b = 0; b < rows.size(0); ++b) {
    std::vector<at::Tensor> positions;
    for (int64_t j = 0; j < length; ++j) positions.push_back(stored[rows[b][j].item<int64_t>()].select(1, j));
    per_row.push_back(at::stack(positions, 1));  // [H, S, Dh]
  }
  return at::stack(per_row);
}

// Widths below, at and above the kernel's 16 lanes, and not a multiple of them.
TEST(SingleQueryAttention, EqualsPlainAttentionWithPaddingAndWeights) {
  c10::NoGradGuard no_grad;
  at::manual_seed(1);
  for (const int64_t width : {4, 16, 37, 64, 85}) {  // each of the kernel's column blocks (64, 16, 1)
    const int64_t batch = 3, heads = 2, length = 7;
    const auto q = at::randn({batch, heads, 1, width});
    const auto k = at::randn({batch, heads, length, width});
    const auto v = at::randn({batch, heads, length, width});
    auto pad = at::zeros({batch, length}, at::kBool);
    pad[1].slice(0, 4).fill_(true);  // row 1 keeps 4 keys
    pad[2][0] = true;
    const auto [expected, expected_weights] = plain_attention(q, k, v, pad, /*causal=*/false, 0.0);
    const auto [output, weights] = single_query_attention(q, k, v, at::Tensor(), length, pad, /*need_weights=*/true);
    const std::string name = "Dh=" + std::to_string(width);
    EXPECT_TRUE(at::allclose(output, expected, 1e-5, 1e-6)) << name << (output - expected).abs().max();
    EXPECT_TRUE(at::allclose(weights, expected_weights, 1e-5, 1e-7)) << name;
    EXPECT_TRUE(at::equal(weights.squeeze(2).masked_select(pad.unsqueeze(1)), at::zeros({2 * pad.sum().item<int64_t>()})))
        << name;
    EXPECT_FALSE(std::get<1>(single_query_attention(q, k, v, at::Tensor(), length, pad, false)).defined());
  }
}

// Keys read through strides (heads split from a [B, S, H, Dh] projection), past the attended length.
TEST(SingleQueryAttention, ReadsStridedKeysAndOnlyTheFirstLengthPositions) {
  c10::NoGradGuard no_grad;
  at::manual_seed(2);
  const auto q = at::randn({2, 1, 4, 8}).transpose(1, 2);  // [B, H, 1, Dh]
  const auto k = at::randn({2, 9, 4, 8}).transpose(1, 2);  // [B, H, 9, Dh]
  const auto v = at::randn({2, 9, 4, 8}).transpose(1, 2);
  const auto expected = std::get<0>(plain_attention(q, k.narrow(2, 0, 6), v.narrow(2, 0, 6), at::Tensor(), true, 0.0));
  const auto output = std::get<0>(single_query_attention(q, k, v, at::Tensor(), 6, at::Tensor(), false));
  EXPECT_TRUE(at::allclose(output, expected, 1e-5, 1e-6)) << (output - expected).abs().max();
}

TEST(SingleQueryAttention, ReadsEachPositionFromItsMappedRow) {
  c10::NoGradGuard no_grad;
  at::manual_seed(3);
  const int64_t stored_rows = 4, heads = 2, capacity = 10, width = 24, length = 6;
  const auto k = at::randn({stored_rows, heads, capacity, width});
  const auto v = at::randn({stored_rows, heads, capacity, width});
  const auto rows = at::randint(stored_rows, {5, capacity}, at::kLong);  // 5 query rows, some sharing
  const auto q = at::randn({5, heads, 1, width});
  const auto expected = std::get<0>(
      plain_attention(q, gathered(k, rows, length), gathered(v, rows, length), at::Tensor(), true, 0.0));
  const auto output = std::get<0>(single_query_attention(q, k, v, rows, length, at::Tensor(), false));
  EXPECT_TRUE(at::allclose(output, expected, 1e-5, 1e-6)) << (output - expected).abs().max();
}

// A beam's rows reading their sentence's encoder keys: one index per row, expanded over positions.
TEST(SingleQueryAttention, ReadsAnExpandedRowMap) {
  c10::NoGradGuard no_grad;
  at::manual_seed(5);
  const auto k = at::randn({2, 3, 5, 16});  // two sentences
  const auto v = at::randn({2, 3, 5, 16});
  const auto sentence = at::tensor({1, 1, 0, 1}, at::kLong);  // of each of four beams
  const auto q = at::randn({4, 3, 1, 16});
  auto pad = at::zeros({4, 5}, at::kBool);
  pad[2][4] = true;
  const auto [expected, expected_weights] =
      plain_attention(q, k.index_select(0, sentence), v.index_select(0, sentence), pad, false, 0.0);
  const auto [output, weights] =
      single_query_attention(q, k, v, sentence.unsqueeze(1).expand({4, 5}), 5, pad, /*need_weights=*/true);
  EXPECT_TRUE(at::allclose(output, expected, 1e-5, 1e-6)) << (output - expected).abs().max();
  EXPECT_TRUE(at::allclose(weights, expected_weights, 1e-5, 1e-7));
}

TEST(KeyValueCache, SelectComposesTheRowMapAndMaterializesTheRows) {
  const auto keys = at::randn({3, 2, 4, 5});
  const auto values = at::randn({3, 2, 4, 5});
  KeyValueCache cache{keys, values, at::Tensor(), CodeGrid{}, CodeGrid{}};
  EXPECT_TRUE(cache.materialized().keys.is_same(keys));  // no map: nothing copied
  cache.select(at::tensor({2, 2, 0, 1}, at::kLong));
  cache.select(at::tensor({3, 0, 1}, at::kLong));  // rows 1, 2, 2 of the keys
  EXPECT_TRUE(cache.keys.is_same(keys));
  EXPECT_TRUE(at::equal(cache.rows, at::tensor({1, 2, 2}, at::kLong)));
  EXPECT_TRUE(at::equal(cache.materialized().keys, keys.index_select(0, cache.rows)));
  EXPECT_TRUE(at::equal(cache.materialized().values, values.index_select(0, cache.rows)));
}

TEST(SingleQueryAttention, TakesOnlyOneFp32CpuQueryWithoutGradient) {
  const auto k = at::randn({2, 2, 3, 4});
  EXPECT_TRUE(takes_single_query_attention(at::randn({2, 2, 1, 4}), k, k));
  EXPECT_FALSE(takes_single_query_attention(at::randn({2, 2, 3, 4}), k, k));  // a whole target
  EXPECT_FALSE(takes_single_query_attention(at::randn({2, 2, 1, 4}, at::kDouble), k, k));
  const auto trained = at::randn({2, 2, 1, 4}).requires_grad_();
  EXPECT_FALSE(takes_single_query_attention(trained, k, k));
  c10::NoGradGuard no_grad;
  EXPECT_TRUE(takes_single_query_attention(trained, k, k));
}

// The cache against what it replaces: concatenating each step's keys and index_select-ing the
// rows, over enough steps to grow the storage twice, with rows repeated, reordered and dropped.
TEST(IncrementalKeyValueCache, MaterializesWhatConcatenationAndSelectionGive) {
  c10::NoGradGuard no_grad;
  at::manual_seed(4);
  const int64_t heads = 2, width = 3;
  IncrementalKeyValueCache cache;
  cache.select(at::tensor({0, 0}, at::kLong));  // empty: nothing to do
  at::Tensor keys, values;                      // the reference, [B, H, t, Dh]
  int64_t batch = 3;
  for (int64_t step = 0; step < 40; ++step) {
    const int64_t added = step == 0 ? 2 : 1;
    const auto new_keys = at::randn({batch, added, heads, width}).transpose(1, 2);  // as split_heads leaves them
    const auto new_values = at::randn({batch, added, heads, width}).transpose(1, 2);
    cache.append({new_keys, new_values, at::Tensor(), CodeGrid{}, CodeGrid{}});
    keys = keys.defined() ? at::cat({keys, new_keys}, 2) : new_keys;
    values = values.defined() ? at::cat({values, new_values}, 2) : new_values;
    if (step % 3 == 1) {
      const int64_t selected = step % 18 == 4 ? batch + 2 : std::max<int64_t>(1, batch - step % 2);  // more, fewer
      const auto rows = at::randint(batch, {selected}, at::kLong);
      cache.select(rows);
      keys = keys.index_select(0, rows);
      values = values.index_select(0, rows);
      batch = rows.size(0);
    }
    ASSERT_EQ(cache.length(), step + 2);
    const auto current = cache.materialized();
    ASSERT_TRUE(at::equal(current.keys, keys)) << "step " << step;
    ASSERT_TRUE(at::equal(current.values, values)) << "step " << step;
    // The kernel reads the storage through the map as the gathered tensors read.
    const auto q = at::randn({batch, heads, 1, width});
    const auto expected = std::get<0>(plain_attention(q, keys, values, at::Tensor(), true, 0.0));
    const auto output = std::get<0>(
        single_query_attention(q, cache.stored_keys(), cache.stored_values(), cache.rows(), cache.length(),
                               at::Tensor(), false));
    ASSERT_TRUE(at::allclose(output, expected, 1e-5, 1e-6)) << "step " << step;
  }
}

// An int8 decoder's keys and values as uint8 codes: the kernel reads them as dequantize_codes
// gives them, for every column block of the kernel, through a row map and with padding.
TEST(SingleQueryAttention, ReadsCodesAsTheirDequantizedFloats) {
  c10::NoGradGuard no_grad;
  at::manual_seed(6);
  const CodeGrid key_grid{0.031f, 131}, value_grid{0.017f, 122};
  for (const int64_t width : {4, 16, 37, 64, 85}) {
    const int64_t stored_rows = 3, heads = 2, capacity = 9, length = 7;
    const auto key_codes = at::randint(256, {stored_rows, capacity, heads, width}, at::kByte).transpose(1, 2);
    const auto value_codes = at::randint(256, {stored_rows, capacity, heads, width}, at::kByte).transpose(1, 2);
    const auto rows = at::randint(stored_rows, {4, capacity}, at::kLong);
    const auto q = at::randn({4, heads, 1, width});
    auto pad = at::zeros({4, length}, at::kBool);
    pad[1].slice(0, 5).fill_(true);
    const auto keys = dequantize_codes(key_codes, key_grid), values = dequantize_codes(value_codes, value_grid);
    const auto [expected, expected_weights] = single_query_attention(q, keys, values, rows, length, pad, true);
    const auto [output, weights] =
        single_query_attention(q, key_codes, value_codes, rows, length, pad, true, key_grid, value_grid);
    const std::string name = "Dh=" + std::to_string(width);
    // Bit-equal with g++ 12 here; g++ 13 on the GPU machine contracted the two paths' products
    // into fused multiply-adds differently (3e-7 apart). A wrong code, grid or row is far above this.
    EXPECT_TRUE(at::allclose(output, expected, 1e-6, 1e-6)) << name << (output - expected).abs().max();
    EXPECT_TRUE(at::allclose(weights, expected_weights, 1e-6, 1e-6)) << name;
  }
}

TEST(KeyValueCache, DequantizesCodesAfterSelection) {
  const CodeGrid key_grid{0.5f, 3}, value_grid{0.25f, 200};
  const auto keys = at::randint(256, {3, 2, 4, 5}, at::kByte);
  const auto values = at::randint(256, {3, 2, 4, 5}, at::kByte);
  KeyValueCache cache{keys, values, at::Tensor(), key_grid, value_grid};
  ASSERT_TRUE(cache.holds_codes());
  cache.select(at::tensor({2, 0}, at::kLong));
  const auto full = cache.materialized().in_float();
  EXPECT_FALSE(full.holds_codes());
  EXPECT_TRUE(at::equal(full.keys, (keys.index_select(0, at::tensor({2, 0}, at::kLong)).to(at::kInt) - 3).to(at::kFloat) * 0.5f));
  EXPECT_TRUE(at::equal(full.values, (values.index_select(0, at::tensor({2, 0}, at::kLong)).to(at::kInt) - 200).to(at::kFloat) * 0.25f));
}

TEST(IncrementalKeyValueCache, KeepsCodesOnOneGrid) {
  const CodeGrid key_grid{0.5f, 3}, value_grid{0.25f, 200};
  const auto step = [](int64_t added) { return at::randint(256, {2, added, 4, 3}, at::kByte).transpose(1, 2); };
  IncrementalKeyValueCache cache;
  const auto first_keys = step(1), first_values = step(1);
  cache.append({first_keys, first_values, at::Tensor(), key_grid, value_grid});
  const auto second_keys = step(1), second_values = step(1);
  cache.append({second_keys, second_values, at::Tensor(), key_grid, value_grid});
  cache.select(at::tensor({1, 1, 0}, at::kLong));
  const auto current = cache.materialized();
  ASSERT_TRUE(current.holds_codes());
  EXPECT_EQ(current.key_grid.zero_point, 3);
  EXPECT_TRUE(at::equal(current.keys, at::cat({first_keys, second_keys}, 2).index_select(0, at::tensor({1, 1, 0}, at::kLong))));
  EXPECT_TRUE(at::equal(current.values, at::cat({first_values, second_values}, 2).index_select(0, at::tensor({1, 1, 0}, at::kLong))));
  EXPECT_THROW(cache.append({step(1).narrow(0, 0, 1).repeat({3, 1, 1, 1}), step(1).narrow(0, 0, 1).repeat({3, 1, 1, 1}),
                             at::Tensor(), CodeGrid{0.5f, 4}, value_grid}),
               Error);
  EXPECT_THROW(cache.append({at::randn({3, 4, 1, 3}), at::randn({3, 4, 1, 3}), at::Tensor(), CodeGrid{}, CodeGrid{}}),
               Error);
}

// Training appends a whole target once: the cache keeps the projections, copying nothing.
TEST(IncrementalKeyValueCache, FirstAppendKeepsTheTensors) {
  const auto keys = at::randn({2, 5, 4, 3}).transpose(1, 2);
  const auto values = at::randn({2, 4, 5, 3});
  IncrementalKeyValueCache cache;
  cache.append({keys, values, at::Tensor(), CodeGrid{}, CodeGrid{}});
  EXPECT_EQ(cache.materialized().keys.data_ptr(), keys.data_ptr());
  EXPECT_EQ(cache.materialized().values.data_ptr(), values.data_ptr());
  EXPECT_FALSE(cache.rows().defined());
}

}  // namespace
}  // namespace mixseq
