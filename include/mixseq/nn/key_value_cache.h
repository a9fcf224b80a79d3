// Projected keys and values of an attention, as its callers keep them between calls.
#pragma once

#include <torch/types.h>

#include "mixseq/nn/int8_activation.h"

namespace mixseq {

// Keys and values, each [R, H, S, Dh] (undefined while empty), and which of their R rows each
// query row reads: a beam search's rows share their sentence's encoder keys without copies.
//
// An int8 model's decoding steps keep keys and values as the uint8 codes of their projections'
// output grids (MultiheadAttention::project_key_value_for_steps): each step's attention reads
// every key and value of the sentence, and at beam-search shapes those reads, not the
// arithmetic, set its speed (docs/quantization.md).
struct KeyValueCache {
  torch::Tensor keys;
  torch::Tensor values;
  torch::Tensor rows;  // [B] int64: query row b reads row rows[b]; undefined: row b (R = B)
  CodeGrid key_grid, value_grid;  // where keys and values are uint8 codes

  bool holds_codes() const { return keys.defined() && keys.scalar_type() == at::kByte; }

  // rows [B'] int64: query row i becomes the former query row rows[i]. Copies no keys.
  void select(const torch::Tensor& rows);

  // Keys and values [B, H, S, Dh], one row per query row (copies where `rows` is defined).
  KeyValueCache materialized() const;

  // Float keys and values (dequantized where they are codes).
  KeyValueCache in_float() const;
};

}  // namespace mixseq
