#include "mixseq/data/token_dataset.h"

#include <gtest/gtest.h>

#include <cstring>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::TempDir;

void write_dataset(const std::string& path, const std::vector<std::vector<int64_t>>& sentences, int64_t vocab_size,
                   uint64_t fingerprint = 42) {
  TokenDatasetWriter writer(path, vocab_size, fingerprint);
  for (const auto& s : sentences) writer.add(s);
  writer.finish();
}

void expect_error_containing(const std::function<void()>& action, const std::string& expected) {
  try {
    action();
    ADD_FAILURE() << "no error; expected one containing '" << expected << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(TokenDataset, RoundTripsSentencesIncludingEmptyOnes) {
  TempDir dir;
  const std::vector<std::vector<int64_t>> sentences = {{5, 6, 7}, {}, {9}, {4, 4, 4, 4, 4}};
  for (const int64_t vocab_size : {10, 70000}) {  // 2-byte and 4-byte ids
    const auto path = dir.path("d" + std::to_string(vocab_size) + ".bin");
    auto wide = sentences;
    if (vocab_size > 65536) wide[2][0] = 69999;
    write_dataset(path, wide, vocab_size, 1234);
    const TokenDataset dataset(path);
    ASSERT_EQ(dataset.size(), 4);
    EXPECT_EQ(dataset.total_tokens(), 9);
    EXPECT_EQ(dataset.lengths(), (std::vector<int64_t>{3, 0, 1, 5}));
    EXPECT_EQ(dataset.vocab_size(), vocab_size);
    EXPECT_EQ(dataset.vocab_fingerprint(), 1234u);
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(dataset.sequence(i), wide[i]);
  }
}

TEST(TokenDataset, NothingAppearsUntilFinish) {
  TempDir dir;
  const auto path = dir.path("d.bin");
  {
    TokenDatasetWriter writer(path, 10, 0);
    writer.add({1, 2});
  }  // abandoned, e.g. by an exception
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(TokenDataset, WriterRejectsIdsOutsideVocabulary) {
  TempDir dir;
  TokenDatasetWriter writer(dir.path("d.bin"), 10, 0);
  EXPECT_THROW(writer.add({3, 10}), Error);
  EXPECT_THROW(writer.add({-1}), Error);
}

TEST(TokenDataset, ChecksumOfTheWriterIsThatOfTheFile) {
  TempDir dir;
  const auto path = dir.path("d.bin");
  TokenDatasetWriter writer(path, 10, 42);
  writer.add({1, 2, 3});
  writer.add({4});
  const uint64_t written = writer.finish();
  EXPECT_EQ(TokenDataset(path).checksum(), written);

  std::string flipped = test::read_file(path);
  flipped[66] ^= 1;  // the second token: 2 -> 3, still a valid id
  test::write_file(path, flipped);
  const TokenDataset changed(path);
  EXPECT_EQ(changed.sequence(0), (std::vector<int64_t>{1, 3, 3}));
  EXPECT_NE(changed.checksum(), written);
}

TEST(TokenDataset, CorruptFilesGiveClearErrors) {
  TempDir dir;
  const auto path = dir.path("d.bin");
  write_dataset(path, {{1, 2, 3}, {4}}, 10);
  const std::string good = test::read_file(path);

  test::write_file(path, good.substr(0, good.size() - 3));
  expect_error_containing([&] { TokenDataset{path}; }, "truncated");

  std::string bad_magic = good;
  bad_magic[0] = 'X';
  test::write_file(path, bad_magic);
  expect_error_containing([&] { TokenDataset{path}; }, "bad magic");

  std::string future = good;
  future[8] = 9;  // format version
  test::write_file(path, future);
  expect_error_containing([&] { TokenDataset{path}; }, "format version 9");

  std::string bad_id = good;
  bad_id[64] = 11;  // first token id, beyond the vocabulary of 10
  test::write_file(path, bad_id);
  const TokenDataset dataset(path);
  expect_error_containing([&] { dataset.sequence(0); }, "holds id 11");

  expect_error_containing([&] { TokenDataset{dir.path("missing.bin")}; }, "missing.bin");
}

// Counts whose products wrap around 2^64 to the file's size passed the size check and sent the
// reader outside the file (fuzz_token_dataset; tests/fuzz/corpus/token_dataset/crash_wrapping_counts).
TEST(TokenDataset, HugeCountsInTheHeaderAreErrorsNotWildReads) {
  TempDir dir;
  const auto path = dir.path("d.bin");
  write_dataset(path, {{1, 2, 3}, {4}}, 10);
  const std::string good = test::read_file(path);
  std::string wrapped = good;  // 64 header + 8 token bytes (u16) + 3 offsets = 96 bytes
  const uint64_t sequences = (uint64_t{1} << 61) + 2;  // (sequences + 1) * 8 wraps to 24, the offsets' size
  std::memcpy(&wrapped[16], &sequences, sizeof sequences);
  test::write_file(path, wrapped);
  expect_error_containing([&] { TokenDataset{path}; }, "more than its 96 bytes hold");

  std::string many_tokens = good;
  const uint64_t tokens = (uint64_t{1} << 63) + 4;  // 2 bytes each: wraps to 8, the token bytes' size
  std::memcpy(&many_tokens[24], &tokens, sizeof tokens);
  test::write_file(path, many_tokens);
  expect_error_containing([&] { TokenDataset{path}; }, "more than its 96 bytes hold");
}

}  // namespace
}  // namespace mixseq
