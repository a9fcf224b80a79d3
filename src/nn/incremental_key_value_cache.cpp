#include "mixseq/nn/incremental_key_value_cache.h"

#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>

#include <algorithm>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Positions stored at least once storage is allocated, so that a search's first steps do not
// reallocate each time.
constexpr int64_t kMinimumCapacity = 16;

// [R, C, H, Dh] storage seen as [R, H, C, Dh]: a position's heads lie together, as the
// projections write them.
torch::Tensor new_storage(const torch::Tensor& like, int64_t rows, int64_t capacity) {
  return at::empty({rows, capacity, like.size(1), like.size(3)}, like.options()).transpose(1, 2);
}

}  // namespace

void IncrementalKeyValueCache::append(const KeyValueCache& step) {
  const auto& keys = step.keys;
  const auto& values = step.values;
  MIXSEQ_CHECK(keys.dim() == 4 && keys.sizes() == values.sizes() && keys.scalar_type() == values.scalar_type() &&
                   !step.rows.defined(),
               "IncrementalKeyValueCache: keys and values must be [B, H, T, Dh] alike, without rows, got ",
               keys.sizes(), " and ", values.sizes());
  const int64_t batch = keys.size(0), added = keys.size(2);
  if (empty()) {
    keys_ = keys;
    values_ = values;
    rows_ = torch::Tensor();
    key_grid_ = step.key_grid;
    value_grid_ = step.value_grid;
    batch_ = batch;
    length_ = added;
    return;
  }
  MIXSEQ_CHECK(batch == batch_ && keys.size(1) == keys_.size(1) && keys.size(3) == keys_.size(3) &&
                   keys.scalar_type() == keys_.scalar_type(),
               "IncrementalKeyValueCache: appending ", keys.sizes(), " ", keys.scalar_type(), " to a cache of ", batch_,
               " rows of [", keys_.size(1), ", ", length_, ", ", keys_.size(3), "] ", keys_.scalar_type());
  MIXSEQ_CHECK(!step.holds_codes() || (step.key_grid.scale == key_grid_.scale &&
                                       step.key_grid.zero_point == key_grid_.zero_point &&
                                       step.value_grid.scale == value_grid_.scale &&
                                       step.value_grid.zero_point == value_grid_.zero_point),
               "IncrementalKeyValueCache: codes appended on another grid than the stored ones");
  reserve(batch, length_ + added);
  keys_.narrow(0, 0, batch).narrow(2, length_, added).copy_(keys);
  values_.narrow(0, 0, batch).narrow(2, length_, added).copy_(values);
  if (rows_.defined()) {
    rows_.narrow(1, length_, added).copy_(at::arange(batch, rows_.options()).unsqueeze(1).expand({batch, added}));
  }
  length_ += added;
}

void IncrementalKeyValueCache::select(const torch::Tensor& rows) {
  if (empty()) return;
  const auto index = rows.to(keys_.device(), at::kLong);  // [B']
  rows_ = rows_.defined() ? rows_.index_select(0, index)
                          : index.unsqueeze(1).expand({index.size(0), keys_.size(2)}).contiguous();  // [B', C]
  batch_ = index.size(0);
}

KeyValueCache IncrementalKeyValueCache::materialized() const {
  if (!rows_.defined()) {
    return {keys_.narrow(0, 0, batch_).narrow(2, 0, length_), values_.narrow(0, 0, batch_).narrow(2, 0, length_),
            /*rows=*/torch::Tensor(), key_grid_, value_grid_};
  }
  using at::indexing::TensorIndex;
  const auto rows = rows_.narrow(1, 0, length_);                             // [B, t]
  const auto positions = at::arange(length_, rows_.options()).unsqueeze(0);  // [1, t]
  const auto gather = [&](const torch::Tensor& stored) {                     // -> [B, H, t, Dh]
    return stored.transpose(1, 2).index({TensorIndex(rows), TensorIndex(positions)}).transpose(1, 2);
  };
  return {gather(keys_), gather(values_), /*rows=*/torch::Tensor(), key_grid_, value_grid_};
}

void IncrementalKeyValueCache::reserve(int64_t batch, int64_t length) {
  if (keys_.size(0) >= batch && keys_.size(2) >= length) return;
  const int64_t capacity = std::max({length, 2 * keys_.size(2), kMinimumCapacity});
  const auto current = materialized();  // [B, H, t, Dh]
  keys_ = new_storage(current.keys, batch, capacity);
  values_ = new_storage(current.values, batch, capacity);
  keys_.narrow(2, 0, length_).copy_(current.keys);
  values_.narrow(2, 0, length_).copy_(current.values);
  rows_ = torch::Tensor();
}

}  // namespace mixseq
