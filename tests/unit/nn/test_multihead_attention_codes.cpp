// An int8 MultiheadAttention's decoding keys and values kept as uint8 codes: the same floats
// the int8 projections give, so the same attention, in the single-query kernel and the plain one.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "mixseq/nn/multihead_attention.h"
#include "mixseq/util/int8_engine.h"

namespace mixseq {
namespace {

// Puts k_proj and v_proj in int8, on grids covering what they see from `memory`.
void run_keys_and_values_in_int8(MultiheadAttentionImpl& attention, const torch::Tensor& memory) {
  for (const std::string name : {"k_proj", "v_proj"}) {
    auto* linear = dynamic_cast<QuantizableLinearImpl*>(attention.named_modules()[name].get());
    ASSERT_NE(linear, nullptr) << name;
    const auto y = linear->forward(memory);
    LinearQuantization q;
    q.precision = LinearPrecision::kInt8;
    q.weight = make_quantization_grid(linear->weight.min(), linear->weight.max(), 8, /*symmetric=*/true);
    q.input = make_quantization_grid(memory.min(), memory.max(), 8, /*symmetric=*/false);
    q.output = make_quantization_grid(y.min(), y.max(), 8, /*symmetric=*/false);
    linear->set_quantization(q);
  }
}

TEST(MultiheadAttention, Int8KeysAndValuesAsCodesAttendAsTheirFloats) {
  if (!int8_engine_available()) GTEST_SKIP() << "this LibTorch has no ONEDNN or FBGEMM engine";
  at::manual_seed(27);
  torch::NoGradGuard no_grad;
  MultiheadAttention attention(MultiheadAttentionOptions{64, 4, 0.0});
  attention->eval();
  const auto memory = at::randn({3, 6, 64});
  auto pad_mask = at::zeros({3, 6}, at::kBool);
  pad_mask[2].slice(0, 4).fill_(true);
  const auto float_keys = attention->project_key_value_for_steps(memory);
  EXPECT_FALSE(float_keys.holds_codes()) << "a float layer's keys stay float";

  run_keys_and_values_in_int8(*attention, memory);
  const auto codes = attention->project_key_value_for_steps(memory);
  const auto floats = attention->project_key_value(memory);
  ASSERT_TRUE(codes.holds_codes());
  EXPECT_TRUE(at::equal(codes.in_float().keys, floats.keys));
  EXPECT_TRUE(at::equal(codes.in_float().values, floats.values));
  for (const int64_t positions : {1, 2}) {  // one query: the single-query kernel; two: the plain one
    const auto query = at::randn({3, positions, 64});
    const auto [from_codes, code_weights] = attention(query, codes, pad_mask, /*causal=*/false, /*need_weights=*/true);
    const auto [from_floats, float_weights] = attention(query, floats, pad_mask, false, true);
    EXPECT_TRUE(at::equal(from_codes, from_floats)) << positions << " positions";
    EXPECT_TRUE(at::equal(code_weights, float_weights)) << positions << " positions";
  }
  // The self-attention cache of a decoder's steps.
  IncrementalKeyValueCache code_cache, float_cache;
  for (int64_t step = 0; step < 3; ++step) {
    const auto y = at::randn({3, 1, 64});
    code_cache.append(attention->project_key_value_for_steps(y));
    float_cache.append(attention->project_key_value(y));
    code_cache.select(at::tensor({2, 0, 0}, at::kLong));
    float_cache.select(at::tensor({2, 0, 0}, at::kLong));
    EXPECT_TRUE(at::equal(attention->forward_incremental(y, code_cache), attention->forward_incremental(y, float_cache)))
        << "step " << step;
  }
}

}  // namespace
}  // namespace mixseq
