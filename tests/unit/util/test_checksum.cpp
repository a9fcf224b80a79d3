#include "mixseq/util/checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace mixseq {
namespace {

std::string sample_bytes(size_t size) {
  std::string bytes(size, '\0');
  uint32_t state = 12345;
  for (auto& byte : bytes) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<char>(state >> 24);
  }
  return bytes;
}

TEST(Checksum64, DoesNotDependOnHowTheBytesArrive) {
  const auto bytes = sample_bytes(1000);
  const uint64_t whole = checksum64(bytes.data(), bytes.size());
  for (const size_t piece : {1, 3, 7, 8, 31, 32, 33, 100}) {
    Checksum64 checksum;
    for (size_t at = 0; at < bytes.size(); at += piece)
      checksum.update(bytes.data() + at, std::min(piece, bytes.size() - at));
    EXPECT_EQ(checksum.value(), whole) << "pieces of " << piece;
  }
}

TEST(Checksum64, EveryFlippedBitAndEveryLengthChangesIt) {
  auto bytes = sample_bytes(77);  // lanes, a partial block and a tail
  const uint64_t original = checksum64(bytes.data(), bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      bytes[i] ^= static_cast<char>(1 << bit);
      EXPECT_NE(checksum64(bytes.data(), bytes.size()), original) << "byte " << i << " bit " << bit;
      bytes[i] ^= static_cast<char>(1 << bit);
    }
  // Two sign bits flipped in the same lane (floats 32 bytes apart) do not cancel out.
  bytes[7] ^= static_cast<char>(0x80);
  bytes[39] ^= static_cast<char>(0x80);
  EXPECT_NE(checksum64(bytes.data(), bytes.size()), original);

  const std::string zeros(64, '\0');
  std::set<uint64_t> by_length;
  for (size_t size = 0; size <= zeros.size(); ++size) by_length.insert(checksum64(zeros.data(), size));
  EXPECT_EQ(by_length.size(), zeros.size() + 1);  // trailing zero bytes count
}

// An empty sentence is an empty vector, whose data() is null: UBSan stopped TokenDatasetWriter on
// the memcpy from it (issue 11, the sanitizer build).
TEST(Checksum64, EmptyUpdatesMayPassNull) {
  Checksum64 checksum;
  checksum.update(nullptr, 0);
  checksum.update("ab", 2);
  checksum.update(nullptr, 0);
  Checksum64 expected;
  expected.update("ab", 2);
  EXPECT_EQ(checksum.value(), expected.value());
}

TEST(Checksum64, HexHasSixteenDigits) {
  EXPECT_EQ(checksum_hex(0), "0000000000000000");
  EXPECT_EQ(checksum_hex(0x0123456789ABCDEFull), "0123456789abcdef");
}

}  // namespace
}  // namespace mixseq
