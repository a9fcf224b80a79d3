#include "mixseq/data/translation_batch.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "mixseq/data/token_dataset.h"
#include "mixseq/text/vocabulary.h"

namespace mixseq {

TranslationBatch TranslationBatch::to(const torch::Device& device) const {
  TranslationBatch moved = *this;
  moved.source = source.to(device, /*non_blocking=*/true);
  moved.source_lengths = source_lengths.to(device, /*non_blocking=*/true);
  if (target_input.defined()) {
    moved.target_input = target_input.to(device, /*non_blocking=*/true);
    moved.target_output = target_output.to(device, /*non_blocking=*/true);
  }
  return moved;
}

TranslationBatch make_translation_batch(const TokenDataset& source, const TokenDataset* target,
                                        const std::vector<int64_t>& indices) {
  const auto rows = static_cast<int64_t>(indices.size());
  int64_t source_width = 0, target_width = 0;
  for (const int64_t i : indices) {
    source_width = std::max(source_width, source.length(i) + 1);
    if (target) target_width = std::max(target_width, target->length(i) + 1);
  }
  TranslationBatch batch;
  batch.indices = indices;
  batch.source = at::full({rows, source_width}, kPadId, at::kLong);
  batch.source_lengths = at::empty({rows}, at::kLong);
  auto* source_data = batch.source.data_ptr<int64_t>();
  auto* lengths = batch.source_lengths.data_ptr<int64_t>();
  if (target) {
    batch.target_input = at::full({rows, target_width}, kPadId, at::kLong);
    batch.target_output = at::full({rows, target_width}, kPadId, at::kLong);
  }
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t i = indices[row];
    int64_t* source_row = source_data + row * source_width;
    source.copy_sequence(i, source_row);
    source_row[source.length(i)] = kEosId;
    lengths[row] = source.length(i) + 1;
    batch.source_tokens += lengths[row];
    if (!target) continue;
    const int64_t n = target->length(i);
    int64_t* input_row = batch.target_input.data_ptr<int64_t>() + row * target_width;
    int64_t* output_row = batch.target_output.data_ptr<int64_t>() + row * target_width;
    target->copy_sequence(i, output_row);
    output_row[n] = kEosId;
    input_row[0] = kBosId;
    std::copy(output_row, output_row + n, input_row + 1);
    batch.target_tokens += n + 1;
  }
  return batch;
}

std::vector<int64_t> model_lengths(const TokenDataset& dataset) {
  auto lengths = dataset.lengths();
  for (auto& length : lengths) ++length;  // </s> on the source side, <s> or </s> on the target side
  return lengths;
}

}  // namespace mixseq
