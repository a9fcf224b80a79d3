#include "mixseq/nn/key_value_cache.h"

#include <ATen/ATen.h>

namespace mixseq {

void KeyValueCache::select(const torch::Tensor& selected) {
  const auto index = selected.to(keys.device(), at::kLong);
  rows = rows.defined() ? rows.index_select(0, index) : index;
}

KeyValueCache KeyValueCache::materialized() const {
  if (!rows.defined()) return *this;
  return {keys.index_select(0, rows), values.index_select(0, rows), torch::Tensor(), key_grid, value_grid};
}

KeyValueCache KeyValueCache::in_float() const {
  if (!holds_codes()) return *this;
  return {dequantize_codes(keys, key_grid), dequantize_codes(values, value_grid), rows, CodeGrid{}, CodeGrid{}};
}

}  // namespace mixseq
