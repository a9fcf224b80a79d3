#include "mixseq/data/token_batching.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "mixseq/util/error.h"
#include "mixseq/util/random.h"
#include "test_support.h"

namespace mixseq {
namespace {

std::vector<int64_t> random_lengths(int64_t n, int64_t max_length, uint64_t seed) {
  PortableRandom random(seed);
  std::vector<int64_t> lengths(n);
  for (auto& l : lengths) l = random.uniform(1, max_length);
  return lengths;
}

int64_t padded_tokens(const std::vector<int64_t>& batch, const std::vector<int64_t>& src,
                      const std::vector<int64_t>& tgt) {
  int64_t longest = 0;
  for (const int64_t i : batch) longest = std::max({longest, src[i], tgt[i]});
  return longest * static_cast<int64_t>(batch.size());
}

TEST(TokenBatching, HandWorkedExampleInLengthOrder) {
  // Sorted by length: 1 (len 1), 2 (len 2), 0 (len 3), 4 (len 4), 3 (len 5). With 6 tokens:
  // [1,2] costs 2x2=4; adding 0 would cost 3x3=9. [0] + 4 would cost 2x4=8. [4] + 3: 10.
  BatchingOptions options;
  options.max_tokens = 6;
  options.shuffle = false;
  const auto plan = plan_epoch_batches({3, 1, 2, 5, 4}, {}, options, 1);
  EXPECT_EQ(plan.batches, (std::vector<std::vector<int64_t>>{{1, 2}, {0}, {4}, {3}}));
}

TEST(TokenBatching, EverySentenceExactlyOncePerEpochWithinBudget) {
  const auto src = random_lengths(2000, 60, 1), tgt = random_lengths(2000, 60, 2);
  BatchingOptions options;
  options.max_tokens = 500;
  for (const int64_t epoch : {1, 2, 7}) {
    const auto plan = plan_epoch_batches(src, tgt, options, epoch);
    std::vector<int64_t> seen;
    for (const auto& batch : plan.batches) {
      EXPECT_LE(padded_tokens(batch, src, tgt), options.max_tokens);
      seen.insert(seen.end(), batch.begin(), batch.end());
    }
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(seen.size(), 2000u);
    for (int64_t i = 0; i < 2000; ++i) ASSERT_EQ(seen[i], i);
  }
}

TEST(TokenBatching, BatchesHoldSimilarLengths) {
  const auto src = random_lengths(3000, 80, 3);
  BatchingOptions options;
  options.max_tokens = 800;
  const auto plan = plan_epoch_batches(src, src, options, 1);
  int64_t padding = 0, tokens = 0;
  for (const auto& batch : plan.batches) {
    tokens += padded_tokens(batch, src, src);
    for (const int64_t i : batch) padding -= src[i];
  }
  padding += tokens;
  EXPECT_LT(static_cast<double>(padding) / tokens, 0.05);  // bucketing keeps padding small
}

TEST(TokenBatching, OrderIsFixedBySeedAndEpoch) {
  const auto src = random_lengths(500, 30, 4);
  BatchingOptions options;
  options.max_tokens = 200;
  const auto a = plan_epoch_batches(src, {}, options, 3).batches;
  EXPECT_EQ(a, plan_epoch_batches(src, {}, options, 3).batches);
  EXPECT_NE(a, plan_epoch_batches(src, {}, options, 4).batches);
  options.seed = 99;
  EXPECT_NE(a, plan_epoch_batches(src, {}, options, 3).batches);
}

TEST(TokenBatching, RanksSplitTheGlobalPlanWithoutOverlap) {
  const auto src = random_lengths(1000, 40, 5), tgt = random_lengths(1000, 40, 6);
  BatchingOptions options;
  options.max_tokens = 300;
  const auto single = plan_epoch_batches(src, tgt, options, 2);
  options.world_size = 3;
  std::vector<std::vector<int64_t>> merged;
  std::vector<EpochBatches> ranks;
  for (int64_t rank = 0; rank < 3; ++rank) {
    options.rank = rank;
    ranks.push_back(plan_epoch_batches(src, tgt, options, 2));
  }
  EXPECT_EQ(ranks[0].batches.size(), ranks[1].batches.size());
  EXPECT_EQ(ranks[1].batches.size(), ranks[2].batches.size());
  EXPECT_EQ(ranks[0].dropped_for_sharding, static_cast<int64_t>(single.batches.size() % 3));
  // Step k of rank r is global batch 3k + r: the same batches a single process would see.
  for (size_t k = 0; k < ranks[0].batches.size(); ++k)
    for (int64_t rank = 0; rank < 3; ++rank) EXPECT_EQ(ranks[rank].batches[k], single.batches[3 * k + rank]);
}

TEST(TokenBatching, BatchSizesAreMultiplesWhenAsked) {
  const auto src = random_lengths(1000, 20, 7);
  BatchingOptions options;
  options.max_tokens = 400;
  options.sentence_multiple = 8;
  const auto plan = plan_epoch_batches(src, {}, options, 1);
  int64_t total = 0, not_multiple = 0;
  for (const auto& batch : plan.batches) {
    total += static_cast<int64_t>(batch.size());
    not_multiple += batch.size() % 8 != 0;
  }
  EXPECT_EQ(total, 1000);
  EXPECT_LE(not_multiple, 1);  // only the last, leftover batch may be ragged
}

TEST(TokenBatching, SkipsOverlongAndRejectsImpossibleExamples) {
  BatchingOptions options;
  options.max_tokens = 10;
  options.max_length = 6;
  const auto plan = plan_epoch_batches({2, 7, 3, 9}, {2, 2, 8, 2}, options, 1);
  EXPECT_EQ(plan.skipped_too_long, 3);
  ASSERT_EQ(plan.batches.size(), 1u);
  EXPECT_EQ(plan.batches[0], std::vector<int64_t>{0});

  options.max_length = 0;
  EXPECT_THROW(plan_epoch_batches({2, 11}, {}, options, 1), Error);
  // The message names the data, the example and the caller's config keys (it said "raise
  // max_tokens or set max_length" for a validation split, which skips nothing, and for speech).
  options.data_name = "the valid split of 'data'";
  options.unit = "frames";
  options.max_tokens_key = "speech.valid_max_frames";
  options.max_length_key = "";
  EXPECT_EQ(test::error_of([&] { plan_epoch_batches({2, 11}, {}, options, 1); }),
            "the valid split of 'data': example 2 (counting from 1) has 11 frames, more than "
            "speech.valid_max_frames (10); raise speech.valid_max_frames");
  options.max_length_key = "data.max_length";
  EXPECT_NE(test::error_of([&] { plan_epoch_batches({12, 2}, {}, options, 1); })
                .find("example 1 (counting from 1) has 12 frames, more than speech.valid_max_frames (10); raise "
                      "speech.valid_max_frames, or set data.max_length to skip such examples"),
            std::string::npos);
  options.max_tokens = 0;
  EXPECT_THROW(plan_epoch_batches({2}, {}, options, 1), Error);  // no limit at all
}

TEST(TokenBatching, MaxSentencesCapsBatchSize) {
  BatchingOptions options;
  options.max_tokens = 0;
  options.max_sentences = 4;
  options.shuffle = false;
  const auto plan = plan_epoch_batches(std::vector<int64_t>(10, 3), {}, options, 1);
  ASSERT_EQ(plan.batches.size(), 3u);
  EXPECT_EQ(plan.batches[0].size(), 4u);
  EXPECT_EQ(plan.batches[2].size(), 2u);
}

}  // namespace
}  // namespace mixseq
