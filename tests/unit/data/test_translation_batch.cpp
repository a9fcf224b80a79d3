#include "mixseq/data/translation_batch.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "mixseq/data/token_dataset.h"
#include "mixseq/text/vocabulary.h"
#include "test_support.h"

namespace mixseq {
namespace {

TEST(TranslationBatch, PadsAndAddsSentenceMarkers) {
  test::TempDir dir;
  TokenDatasetWriter source(dir.path("s.bin"), 20, 0), target(dir.path("t.bin"), 20, 0);
  source.add({5, 6, 7});
  target.add({10});
  source.add({8});
  target.add({11, 12, 13});
  source.finish();
  target.finish();
  const TokenDataset s(dir.path("s.bin")), t(dir.path("t.bin"));

  const auto batch = make_translation_batch(s, &t, {1, 0});
  const int P = kPadId, E = kEosId, B = kBosId;  // one element type for torch::tensor
  EXPECT_TRUE(batch.source.equal(torch::tensor({{8, E, P, P}, {5, 6, 7, E}}, torch::kLong)));
  EXPECT_TRUE(batch.source_lengths.equal(torch::tensor({2, 4}, torch::kLong)));
  EXPECT_TRUE(batch.target_input.equal(torch::tensor({{B, 11, 12, 13}, {B, 10, P, P}}, torch::kLong)));
  EXPECT_TRUE(batch.target_output.equal(torch::tensor({{11, 12, 13, E}, {10, E, P, P}}, torch::kLong)));
  EXPECT_EQ(batch.indices, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(batch.source_tokens, 6);
  EXPECT_EQ(batch.target_tokens, 6);
  EXPECT_EQ(model_lengths(s), (std::vector<int64_t>{4, 2}));

  const auto sources_only = make_translation_batch(s, nullptr, {0});
  EXPECT_FALSE(sources_only.target_input.defined());
  EXPECT_EQ(sources_only.source.size(1), 4);
}

}  // namespace
}  // namespace mixseq
