#include "mixseq/data/token_batching.h"

#include <algorithm>
#include <numeric>

#include "mixseq/util/error.h"
#include "mixseq/util/random.h"

namespace mixseq {
namespace {

void check_options(const BatchingOptions& options, size_t examples, size_t targets) {
  MIXSEQ_CHECK(options.max_tokens > 0 || options.max_sentences > 0,
               "batching needs a limit: set max_tokens or max_sentences above 0");
  MIXSEQ_CHECK(options.max_tokens >= 0 && options.max_sentences >= 0 && options.max_length >= 0,
               "batching limits must not be negative (max_tokens ", options.max_tokens, ", max_sentences ",
               options.max_sentences, ", max_length ", options.max_length, ")");
  MIXSEQ_CHECK(options.sentence_multiple >= 1, "sentence_multiple (", options.sentence_multiple,
               ") must be at least 1");
  MIXSEQ_CHECK(options.world_size >= 1 && options.rank >= 0 && options.rank < options.world_size, "rank ",
               options.rank, " is outside world size ", options.world_size);
  MIXSEQ_CHECK(targets == 0 || targets == examples, "batching: ", examples, " source lengths but ", targets,
               " target lengths");
}

}  // namespace

EpochBatches plan_epoch_batches(const std::vector<int64_t>& source_lengths,
                                const std::vector<int64_t>& target_lengths, const BatchingOptions& options,
                                int64_t epoch) {
  check_options(options, source_lengths.size(), target_lengths.size());
  const bool has_target = !target_lengths.empty();
  const auto tokens = [&](int64_t i) {  // fairseq num_tokens: the longer side
    return has_target ? std::max(source_lengths[i], target_lengths[i]) : source_lengths[i];
  };

  EpochBatches result;
  std::vector<int64_t> order;
  order.reserve(source_lengths.size());
  for (int64_t i = 0; i < static_cast<int64_t>(source_lengths.size()); ++i) {
    if (options.max_length > 0 && tokens(i) > options.max_length)
      ++result.skipped_too_long;
    else
      order.push_back(i);
  }
  PortableRandom random(derive_seed(options.seed, static_cast<uint64_t>(epoch)));
  if (options.shuffle) random.shuffle(order);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (source_lengths[a] != source_lengths[b]) return source_lengths[a] < source_lengths[b];
    return has_target && target_lengths[a] < target_lengths[b];
  });

  // fairseq data_utils.batch_by_size: when a batch is full, keep a multiple of
  // sentence_multiple and carry the rest into the next batch.
  std::vector<std::vector<int64_t>> global;
  std::vector<int64_t> batch;
  int64_t longest = 0;
  for (const int64_t index : order) {
    const int64_t length = tokens(index);
    MIXSEQ_CHECK(options.max_tokens == 0 || length <= options.max_tokens, options.data_name, ": example ", index + 1,
                 " (counting from 1) has ", length, " ", options.unit, ", more than ", options.max_tokens_key, " (",
                 options.max_tokens, "); raise ", options.max_tokens_key,
                 options.max_length_key.empty()
                     ? std::string()
                     : str_cat(", or set ", options.max_length_key, " to skip such examples"));
    const int64_t size = static_cast<int64_t>(batch.size()) + 1;
    const bool over_tokens = options.max_tokens > 0 && size * std::max(longest, length) > options.max_tokens;
    const bool over_sentences = options.max_sentences > 0 && size > options.max_sentences;
    if (!batch.empty() && (over_tokens || over_sentences)) {
      const int64_t n = static_cast<int64_t>(batch.size());
      const int64_t keep = std::max(options.sentence_multiple * (n / options.sentence_multiple),
                                    n % options.sentence_multiple);
      global.emplace_back(batch.begin(), batch.begin() + keep);
      batch.erase(batch.begin(), batch.begin() + keep);
      longest = 0;
      for (const int64_t rest : batch) longest = std::max(longest, tokens(rest));
    }
    batch.push_back(index);
    longest = std::max(longest, length);
  }
  if (!batch.empty()) global.push_back(std::move(batch));

  if (options.shuffle) random.shuffle(global);
  const auto usable = static_cast<int64_t>(global.size()) / options.world_size * options.world_size;
  result.dropped_for_sharding = static_cast<int64_t>(global.size()) - usable;
  for (int64_t b = options.rank; b < usable; b += options.world_size) result.batches.push_back(std::move(global[b]));
  return result;
}

}  // namespace mixseq
