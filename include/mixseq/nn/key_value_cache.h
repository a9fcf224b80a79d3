// Projected keys and values of an attention, as its callers keep them between calls.
#pragma once

#include <torch/types.h>

namespace mixseq {

// Keys and values, each [R, H, S, Dh] (undefined while empty), and which of their R rows each
// query row reads: a beam search's rows share their sentence's encoder keys without copies.
struct KeyValueCache {
  torch::Tensor keys;
  torch::Tensor values;
  torch::Tensor rows;  // [B] int64: query row b reads row rows[b]; undefined: row b (R = B)

  // rows [B'] int64: query row i becomes the former query row rows[i]. Copies no keys.
  void select(const torch::Tensor& rows);

  // Keys and values [B, H, S, Dh], one row per query row (copies where `rows` is defined).
  KeyValueCache materialized() const;
};

}  // namespace mixseq
