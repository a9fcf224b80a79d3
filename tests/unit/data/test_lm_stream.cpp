#include "mixseq/data/lm_stream.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <numeric>

#include "mixseq/data/token_dataset.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

std::vector<int64_t> iota_tokens(int64_t n) {
  std::vector<int64_t> tokens(n);
  std::iota(tokens.begin(), tokens.end(), 0);
  return tokens;
}

std::vector<LmSegment> read_epoch(LmStream& stream) {
  std::vector<LmSegment> segments;
  while (auto segment = stream.next()) segments.push_back(*segment);
  return segments;
}

TEST(LmStream, CutsStreamsIntoConsecutiveSegments) {
  // 23 tokens, 2 streams: rows 0..10 and 11..21 (token 22 dropped); T = 4 gives inputs
  // [0..3], [4..7], [8..9] and targets shifted by one.
  LmStreamOptions options;
  options.batch_size = 2;
  options.segment_length = 4;
  LmStream stream(iota_tokens(23), options);
  EXPECT_EQ(stream.stream_length(), 11);
  const auto segments = read_epoch(stream);
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_TRUE(segments[0].input.equal(torch::tensor({{0, 1, 2, 3}, {11, 12, 13, 14}}, torch::kLong)));
  EXPECT_TRUE(segments[0].target.equal(torch::tensor({{1, 2, 3, 4}, {12, 13, 14, 15}}, torch::kLong)));
  EXPECT_EQ(segments[1].start, 4);
  EXPECT_TRUE(segments[2].input.equal(torch::tensor({{8, 9}, {19, 20}}, torch::kLong)));
  EXPECT_TRUE(segments[2].target.equal(torch::tensor({{9, 10}, {20, 21}}, torch::kLong)));
  EXPECT_FALSE(stream.next().has_value());
}

TEST(LmStream, RanksReadTheirSliceOfTheStreams) {
  LmStreamOptions options;
  options.batch_size = 4;
  options.segment_length = 5;
  options.roll = true;
  LmStream single(iota_tokens(200), options);
  const auto all = read_epoch(single);
  options.world_size = 2;
  for (int64_t rank = 0; rank < 2; ++rank) {
    options.rank = rank;
    LmStream shard(iota_tokens(200), options);
    const auto mine = read_epoch(shard);
    ASSERT_EQ(mine.size(), all.size());
    for (size_t k = 0; k < all.size(); ++k)
      EXPECT_TRUE(mine[k].input.equal(all[k].input.narrow(0, 2 * rank, 2))) << "rank " << rank << " segment " << k;
  }
  options.batch_size = 3;
  EXPECT_THROW(LmStream(iota_tokens(200), options), Error);
}

TEST(LmStream, RollRotatesEachStreamDifferentlyPerEpoch) {
  LmStreamOptions options;
  options.batch_size = 3;
  options.segment_length = 100;  // one segment holds a whole stream but its last token
  options.roll = true;
  LmStream stream(iota_tokens(300), options);
  const auto first = read_epoch(stream);
  stream.start_epoch(2);
  const auto second = read_epoch(stream);
  ASSERT_EQ(first.size(), 1u);
  for (int64_t b = 0; b < 3; ++b) {
    const auto row = first[0].input[b];
    // A rotation of stream b: every step is +1 except one wrap from the end to the start.
    const auto steps = row.slice(0, 1) - row.slice(0, 0, -1);
    EXPECT_LE((steps != 1).sum().item<int64_t>(), 1);
    EXPECT_EQ(row.min().item<int64_t>(), 100 * b);
  }
  EXPECT_FALSE(first[0].input.equal(second[0].input));
}

TEST(LmStream, VariableLengthsFollowTransformerXlAndResumeExactly) {
  LmStreamOptions options;
  options.batch_size = 2;
  options.segment_length = 20;
  options.variable_length = true;
  LmStream stream(iota_tokens(20000), options);
  std::vector<int64_t> lengths;
  for (int k = 0; k < 100; ++k) {
    const auto segment = stream.next();
    ASSERT_TRUE(segment.has_value());
    lengths.push_back(segment->input.size(1));
  }
  const auto [shortest, longest] = std::minmax_element(lengths.begin(), lengths.end());
  EXPECT_GE(*shortest, 5);
  EXPECT_LE(*longest, 20 + 15);
  EXPECT_NE(*shortest, *longest);

  const auto saved = stream.position();
  const auto expected = stream.next();
  LmStream resumed(iota_tokens(20000), options);
  resumed.seek(saved);
  const auto actual = resumed.next();
  ASSERT_TRUE(actual.has_value());
  EXPECT_EQ(actual->start, expected->start);
  EXPECT_TRUE(actual->input.equal(expected->input));
}

TEST(LmStream, ConcatenatesSentencesWithEos) {
  test::TempDir dir;
  const auto path = dir.path("lm.bin");
  TokenDatasetWriter writer(path, 10, 0);
  writer.add({4, 5});
  writer.add({});
  writer.add({6});
  writer.finish();
  EXPECT_EQ(concatenate_with_eos(TokenDataset(path), 3), (std::vector<int64_t>{4, 5, 3, 3, 6, 3}));
}

}  // namespace
}  // namespace mixseq
