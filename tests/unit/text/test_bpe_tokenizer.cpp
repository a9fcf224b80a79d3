#include "mixseq/text/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <thread>

#include "test_support.h"

namespace mixseq {
namespace {

BpeCodes example_codes() {
  return BpeCodes({{"s", "t</w>"}, {"e", "st</w>"}, {"l", "o"}, {"w", "est</w>"}, {"n", "e"}}, BpeCodes::Version::k0_2,
                  "example.codes");
}

TEST(BpeTokenizer, EncodesIntoThePiecesApplyWrites) {
  const BpeTokenizer tokenizer(example_codes(), BpeApplyOptions{});
  EXPECT_EQ(tokenizer.encode("  the lowest  newest \n"),
            (std::vector<std::string>{"t@@", "h@@", "e", "lo@@", "west", "ne@@", "west"}));
  EXPECT_TRUE(tokenizer.encode("   ").empty());
  EXPECT_EQ(tokenizer.describe(), "bpe:example.codes");
}

TEST(BpeTokenizer, DecodeRemovesTheSeparatorLikeSed) {
  const BpeTokenizer tokenizer(example_codes(), BpeApplyOptions{});
  // sed -r 's/(@@ )|(@@ ?$)//g'
  EXPECT_EQ(tokenizer.decode({"lo@@", "west", "ne@@", "west"}), "lowest newest");
  EXPECT_EQ(tokenizer.decode({"trailing@@"}), "trailing");
  EXPECT_EQ(tokenizer.decode({"a@@@", "b"}), "a@b");  // the first "@@" is followed by "@", not a space
  EXPECT_EQ(tokenizer.decode({}), "");
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("the lowest newest")), "the lowest newest");
}

TEST(BpeTokenizer, EncodesTheSameFromSeveralThreads) {
  std::vector<std::string> lines;
  for (int i = 0; i < 50; ++i)
    lines.push_back("lowest newest slowest w" + std::to_string(i) + " nest" + std::to_string(i % 7));
  std::vector<std::vector<std::string>> expected;
  for (const auto& line : lines) expected.push_back(BpeTokenizer(example_codes(), BpeApplyOptions{}).encode(line));
  const BpeTokenizer shared(example_codes(), BpeApplyOptions{});
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (size_t i = 0; i < lines.size(); ++i) mismatches[t] += shared.encode(lines[i]) != expected[i];
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace mixseq
