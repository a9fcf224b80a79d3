#include "mixseq/util/nearest_name.h"

#include <gtest/gtest.h>

namespace mixseq {
namespace {

TEST(NearestName, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("train", "train"), 0u);
  EXPECT_EQ(edit_distance("trian", "train"), 2u);
  EXPECT_EQ(edit_distance("", "bpe"), 3u);
  EXPECT_EQ(edit_distance("translate", "tarnslate"), 2u);
}

TEST(NearestName, SuggestsATypoFixOrListsTheNames) {
  const std::vector<std::string> commands = {"train", "translate", "bleu"};
  EXPECT_EQ(did_you_mean("trian", commands), "; did you mean 'train'?");
  EXPECT_EQ(did_you_mean("translat", commands), "; did you mean 'translate'?");
  EXPECT_EQ(did_you_mean("xyzzy", commands), "; known: train, translate, bleu");
  EXPECT_EQ(did_you_mean("x", {}), "");
}

}  // namespace
}  // namespace mixseq
