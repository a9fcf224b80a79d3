// Greedy CTC decoding: repeats merged, blanks dropped, lengths respected, word times.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "mixseq/decode/ctc_decoding.h"

namespace mixseq {
namespace {

// Logits whose argmax per frame is `ids`.
torch::Tensor one_hot_logits(const std::vector<int64_t>& ids, int64_t vocab) {
  auto logits = torch::zeros({1, static_cast<int64_t>(ids.size()), vocab});
  for (size_t t = 0; t < ids.size(); ++t) logits[0][static_cast<int64_t>(t)][ids[t]] = 5.0;
  return logits;
}

TEST(CtcDecoding, GreedyMergesRepeatsAndDropsBlanks) {
  const auto symbols = CtcSymbols::english_characters();  // 0 blank, 1 space, 2 ', 3 a, 4 b, ...
  // "a a _ a b b _ _ b": a (merged), blank, a, b (merged), blanks, b -> "aabb"... the blank splits a-a.
  const std::vector<int64_t> frames = {3, 3, 0, 3, 4, 4, 0, 0, 4};
  const auto hypotheses = ctc_greedy_decode(one_hot_logits(frames, symbols.size()), torch::tensor({9}, torch::kLong));
  ASSERT_EQ(hypotheses.size(), 1u);
  EXPECT_EQ(symbols.decode(hypotheses[0].symbols), "aabb");
  EXPECT_EQ(hypotheses[0].first_frame, (std::vector<int64_t>{0, 3, 4, 8}));
  EXPECT_EQ(hypotheses[0].last_frame, (std::vector<int64_t>{1, 3, 5, 8}));
  // Only the first 5 frames count.
  const auto cut = ctc_greedy_decode(one_hot_logits(frames, symbols.size()), torch::tensor({5}, torch::kLong));
  EXPECT_EQ(symbols.decode(cut[0].symbols), "aab");
}

TEST(CtcDecoding, WordsCarryTheirFrameTimes) {
  const auto symbols = CtcSymbols::english_characters();
  // "ab cd" with frames: a a b _ space c _ d
  const std::vector<int64_t> frames = {3, 3, 4, 0, 1, 5, 0, 6};
  const auto hypothesis = ctc_greedy_decode(one_hot_logits(frames, symbols.size()), torch::tensor({8}, torch::kLong))[0];
  const auto words = ctc_words(hypothesis, symbols, 0.02);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0].word, "ab");
  EXPECT_DOUBLE_EQ(words[0].start, 0.0);
  EXPECT_DOUBLE_EQ(words[0].end, 3 * 0.02);
  EXPECT_EQ(words[1].word, "cd");
  EXPECT_DOUBLE_EQ(words[1].start, 5 * 0.02);
  EXPECT_DOUBLE_EQ(words[1].end, 8 * 0.02);
}

// Pieces: a word starts at a piece that begins one ("▁" in SentencePiece's spelling), at that
// piece's first frame; a lone "▁" only ends the word before it.
TEST(CtcDecoding, WordsOfPiecesStartAtWordInitialPieces) {
  const auto symbols = CtcSymbols::from_text("<blank>\tpieces\n\xE2\x96\x81the\n\xE2\x96\x81" "ca\nts\n\xE2\x96\x81\n",
                                             "pieces");
  EXPECT_EQ(symbols.symbol(1), " the");
  // frames: ▁the ▁the _ ▁ca ts _ ▁ ▁the
  const std::vector<int64_t> frames = {1, 1, 0, 2, 3, 0, 4, 1};
  const auto hypothesis = ctc_greedy_decode(one_hot_logits(frames, symbols.size()), torch::tensor({8}, torch::kLong))[0];
  EXPECT_EQ(symbols.decode(hypothesis.symbols), "the cats the");
  const auto words = ctc_words(hypothesis, symbols, 0.04);
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[0].word, "the");
  EXPECT_DOUBLE_EQ(words[0].start, 0.0);
  EXPECT_DOUBLE_EQ(words[0].end, 2 * 0.04);
  EXPECT_EQ(words[1].word, "cats");
  EXPECT_DOUBLE_EQ(words[1].start, 3 * 0.04);
  EXPECT_DOUBLE_EQ(words[1].end, 5 * 0.04);
  EXPECT_EQ(words[2].word, "the");
  EXPECT_DOUBLE_EQ(words[2].start, 7 * 0.04);
}

}  // namespace
}  // namespace mixseq
