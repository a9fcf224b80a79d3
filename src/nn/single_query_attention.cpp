#include "mixseq/nn/single_query_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "mixseq/util/error.h"
#include "nn/exp_by_range_reduction.h"
#include "util/lane_dot.h"
#include "util/vector_clones.h"

namespace mixseq {
namespace {

// Where the operands lie: element strides of the batch, head and position dimensions (the
// last, Dh, is contiguous). Keys and values are float, or uint8 codes on their grids.
template <typename Stored>
struct Layout {
  const float* q;
  int64_t q_batch, q_head;
  const Stored* keys;
  const Stored* values;
  CodeGrid key_grid, value_grid;  // for codes
  int64_t k_row, k_head, k_position, v_row, v_head, v_position;
  const int64_t* rows;  // null: row b reads row b
  int64_t rows_row, rows_position;
  const bool* mask;  // null: nothing masked
  int64_t mask_stride;
  int64_t batch, heads, width, length;  // B, H, Dh, S
  float scale;
  float* output;   // [B, H, Dh]
  float* weights;  // [B, H, S] or null
};

// Sixteen keys' or values' elements in float lanes: codes widened and dequantized as
// dequantize_codes does it, so that both give the same floats.
__attribute__((always_inline)) inline void load_stored(Lanes<float>::type& lanes, const float* p, const CodeGrid&) {
  load_lanes(lanes, p);
}
__attribute__((always_inline)) inline void load_stored(Lanes<float>::type& lanes, const uint8_t* p,
                                                       const CodeGrid& grid) {
  // Element by element, which GCC turns into one widening load (vpmovzxbd); converting a vector
  // of 16 bytes, it moved them one at a time.
  const Lanes<int32_t>::type codes = {p[0], p[1], p[2],  p[3],  p[4],  p[5],  p[6],  p[7],
                                      p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]};
  lanes = __builtin_convertvector(codes - grid.zero_point, Lanes<float>::type) * grid.scale;
}
__attribute__((always_inline)) inline float stored_value(const float* p, const CodeGrid&) { return *p; }
__attribute__((always_inline)) inline float stored_value(const uint8_t* p, const CodeGrid& grid) {
  return static_cast<float>(static_cast<int32_t>(*p) - grid.zero_point) * grid.scale;
}

// lane_dot (util/lane_dot.h) of a query and a stored key.
template <typename Stored>
__attribute__((always_inline)) inline float stored_dot(const float* q, const Stored* key, int64_t n,
                                                       const CodeGrid& grid) {
  return lane_dot(
      q, key, n,
      [&](Lanes<float>::type& lanes, const Stored* p) __attribute__((always_inline)) { load_stored(lanes, p, grid); },
      [&](const Stored* p) __attribute__((always_inline)) { return stored_value(p, grid); });
}

// (row, head) pairs [begin, end); scores has room for S floats.
template <typename Stored>
__attribute__((always_inline)) inline void attend_pairs(const Layout<Stored>& n, int64_t begin, int64_t end,
                                                        float* scores) {
  constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
  for (int64_t pair = begin; pair < end; ++pair) {
    // Head-major: the beams of a sentence follow each other, so the encoder's keys and values of
    // one head (S x Dh, shared by the sentence's beams) stay in L1 between them.
    const int64_t h = pair / n.batch, b = pair % n.batch;
    const int64_t output_pair = b * n.heads + h;  // [B, H] order
    const float* q = n.q + b * n.q_batch + h * n.q_head;
    float max = kMinusInfinity;
    for (int64_t j = 0; j < n.length; ++j) {
      if (n.mask && n.mask[b * n.mask_stride + j]) {
        scores[j] = kMinusInfinity;
        continue;
      }
      const int64_t row = n.rows ? n.rows[b * n.rows_row + j * n.rows_position] : b;
      scores[j] = stored_dot(q, n.keys + row * n.k_row + h * n.k_head + j * n.k_position, n.width, n.key_grid) * n.scale;
      max = std::max(max, scores[j]);
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < n.length; ++j) {
      const float e = exp_by_range_reduction(scores[j] - max);
      scores[j] = scores[j] == kMinusInfinity ? 0.0f : e;  // exactly 0 at padding (coverage penalty)
      sum += scores[j];
    }
    const float inverse = 1.0f / sum;
    for (int64_t j = 0; j < n.length; ++j) scores[j] *= inverse;
    if (n.weights) std::copy(scores, scores + n.length, n.weights + output_pair * n.length);
    // The weighted sum of values (lane_weighted_rows, util/lane_dot.h); padding's values are
    // never read.
    lane_weighted_rows<float, Stored>(
        n.length, n.width, [&](int64_t j) __attribute__((always_inline)) { return scores[j]; },
        [&](int64_t j) __attribute__((always_inline)) -> const Stored* {
          if (scores[j] == 0.0f) return nullptr;
          const int64_t row = n.rows ? n.rows[b * n.rows_row + j * n.rows_position] : b;
          return n.values + row * n.v_row + h * n.v_head + j * n.v_position;
        },
        [&](Lanes<float>::type& lanes, const Stored* p) __attribute__((always_inline)) {
          load_stored(lanes, p, n.value_grid);
        },
        [&](const Stored* p) __attribute__((always_inline)) { return stored_value(p, n.value_grid); },
        n.output + output_pair * n.width);
  }
}

// One copy per CPU of each, chosen once per task, not per dot product.
MIXSEQ_VECTOR_CLONES
void attend_float_pairs(const Layout<float>& n, int64_t begin, int64_t end, float* scores) {
  attend_pairs(n, begin, end, scores);
}
MIXSEQ_VECTOR_CLONES
void attend_code_pairs(const Layout<uint8_t>& n, int64_t begin, int64_t end, float* scores) {
  attend_pairs(n, begin, end, scores);
}

at::Tensor with_contiguous_last_dimension(const at::Tensor& x) { return x.stride(-1) == 1 ? x : x.contiguous(); }

}  // namespace

bool takes_single_query_attention(const torch::Tensor& q, const torch::Tensor& keys, const torch::Tensor& values) {
  const bool keeps_gradient =
      at::GradMode::is_enabled() && (q.requires_grad() || keys.requires_grad() || values.requires_grad());
  const bool stored_as_float = keys.scalar_type() == at::kFloat && values.scalar_type() == at::kFloat;
  const bool stored_as_codes = keys.scalar_type() == at::kByte && values.scalar_type() == at::kByte;
  return q.dim() == 4 && q.size(2) == 1 && q.device().is_cpu() && q.scalar_type() == at::kFloat &&
         (stored_as_float || stored_as_codes) && !keeps_gradient;
}

std::tuple<torch::Tensor, torch::Tensor> single_query_attention(const torch::Tensor& q_in, const torch::Tensor& keys_in,
                                                                const torch::Tensor& values_in,
                                                                const torch::Tensor& rows, int64_t length,
                                                                const torch::Tensor& key_padding_mask,
                                                                bool need_weights, const CodeGrid& key_grid,
                                                                const CodeGrid& value_grid) {
  MIXSEQ_CHECK(takes_single_query_attention(q_in, keys_in, values_in),
               "single_query_attention: needs one fp32 CPU query per row without gradient, and float or uint8 keys ",
               "and values, got q ", q_in.sizes(), " ", q_in.scalar_type(), ", keys ", keys_in.scalar_type());
  const int64_t batch = q_in.size(0), heads = q_in.size(1), width = q_in.size(3);
  MIXSEQ_CHECK(keys_in.dim() == 4 && keys_in.sizes() == values_in.sizes() && keys_in.size(1) == heads &&
                   keys_in.size(3) == width && keys_in.size(2) >= length && length > 0,
               "single_query_attention: keys and values must be [R, ", heads, ", >= ", length, ", ", width, "], got ",
               keys_in.sizes(), " and ", values_in.sizes());
  MIXSEQ_CHECK(rows.defined() ? rows.dim() == 2 && rows.size(0) == batch && rows.size(1) >= length &&
                                       rows.scalar_type() == at::kLong && rows.device().is_cpu()
                                 : keys_in.size(0) >= batch,
               "single_query_attention: rows must be [", batch, ", >= ", length, "] int64 on the CPU, or keys hold a row each");
  MIXSEQ_CHECK(!key_padding_mask.defined() || key_padding_mask.sizes() == at::IntArrayRef({batch, length}),
               "single_query_attention: key_padding_mask must be [", batch, ", ", length, "], got ",
               key_padding_mask.sizes());
  const auto q = with_contiguous_last_dimension(q_in);
  const auto keys = with_contiguous_last_dimension(keys_in);
  const auto values = with_contiguous_last_dimension(values_in);
  const auto mask = key_padding_mask.defined() ? with_contiguous_last_dimension(key_padding_mask.to(at::kBool)) : key_padding_mask;
  auto output = at::empty({batch, heads, 1, width}, q.options());
  auto weights = need_weights ? at::empty({batch, heads, 1, length}, q.options()) : torch::Tensor();
  const auto layout = [&](const auto* stored_keys, const auto* stored_values) {
    using Stored = std::remove_const_t<std::remove_pointer_t<decltype(stored_keys)>>;
    return Layout<Stored>{q.data_ptr<float>(),
                          q.stride(0),
                          q.stride(1),
                          stored_keys,
                          stored_values,
                          key_grid,
                          value_grid,
                          keys.stride(0),
                          keys.stride(1),
                          keys.stride(2),
                          values.stride(0),
                          values.stride(1),
                          values.stride(2),
                          rows.defined() ? rows.data_ptr<int64_t>() : nullptr,
                          rows.defined() ? rows.stride(0) : 0,
                          rows.defined() ? rows.stride(1) : 0,
                          mask.defined() ? mask.data_ptr<bool>() : nullptr,
                          mask.defined() ? mask.stride(0) : 0,
                          batch,
                          heads,
                          width,
                          length,
                          static_cast<float>(1.0 / std::sqrt(static_cast<double>(width))),
                          output.data_ptr<float>(),
                          need_weights ? weights.data_ptr<float>() : nullptr};
  };
  // About 32k multiply-adds a task: enough to pay for handing it to a thread.
  const int64_t grain = std::max<int64_t>(1, 16384 / (length * width));
  if (keys.scalar_type() == at::kByte) {
    const auto codes = layout(keys.data_ptr<uint8_t>(), values.data_ptr<uint8_t>());
    at::parallel_for(0, batch * heads, grain, [&](int64_t begin, int64_t end) {
      std::vector<float> scores(length);
      attend_code_pairs(codes, begin, end, scores.data());
    });
  } else {
    const auto floats = layout(keys.data_ptr<float>(), values.data_ptr<float>());
    at::parallel_for(0, batch * heads, grain, [&](int64_t begin, int64_t end) {
      std::vector<float> scores(length);
      attend_float_pairs(floats, begin, end, scores.data());
    });
  }
  return {output, weights};
}

}  // namespace mixseq
