// The self-attention keys and values of the target positions a decoder has fed, kept so that a
// beam search's reordering moves an index rather than the keys.
//
// A search extends every row by one position a step, then reorders its rows (beams follow their
// parents) and drops some (finished sentences). Copying [B, H, t, Dh] keys and values at each
// reorder and concatenating the new position reads and writes all t positions a step, per
// layer; here each position stays in the storage row that wrote it and a [B, capacity] map says
// where row b's position j is (single_query_attention reads through it). Storage grows by
// doubling. Training's one call of append keeps the projections themselves: no copy.
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "mixseq/nn/key_value_cache.h"

namespace mixseq {

class IncrementalKeyValueCache {
 public:
  bool empty() const { return length_ == 0; }
  int64_t length() const { return length_; }  // t, the positions fed

  // step.keys, step.values [B, H, T, Dh] (without rows): positions t .. t + T - 1 of the
  // current B rows; float, or uint8 codes on the same grids at every step.
  void append(const KeyValueCache& step);

  // rows [B'] int64: row i becomes the former row rows[i]. Nothing to do while empty.
  void select(const torch::Tensor& rows);

  // Keys and values [B, H, t, Dh] of the current rows, gathered where rows were reordered.
  KeyValueCache materialized() const;

  // Storage [R, H, >= t, Dh] (any strides but the last) and the map [B, >= t] int64 from (row,
  // position) to storage row; an undefined map: row b is stored in row b.
  const torch::Tensor& stored_keys() const { return keys_; }
  const torch::Tensor& stored_values() const { return values_; }
  const torch::Tensor& rows() const { return rows_; }
  const CodeGrid& key_grid() const { return key_grid_; }  // where storage holds uint8 codes
  const CodeGrid& value_grid() const { return value_grid_; }

 private:
  void reserve(int64_t batch, int64_t length);  // storage for `batch` rows and `length` positions

  torch::Tensor keys_, values_;  // [R, H, C, Dh]
  torch::Tensor rows_;           // [B, C] int64, or undefined
  CodeGrid key_grid_, value_grid_;
  int64_t batch_ = 0;            // B
  int64_t length_ = 0;           // t <= C
};

}  // namespace mixseq
