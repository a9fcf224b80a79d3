// Checksum64: a 64-bit checksum of bytes, to detect corruption of the files mixseq writes
// (checkpoints, token datasets): a flipped bit on disk or in a copy. It is fast (four
// independent lanes of 8-byte words, several GB/s) and not cryptographic: it catches accidents,
// not tampering.
//
// Each 8-byte little-endian word w enters lane (its index mod 4) as
//   lane = rotl(lane + w · K1, 31) · K2
// which, for a fixed lane, is a bijection of w and, for a fixed w, a bijection of the lane, so
// a change confined to one word always changes the result. The lanes, the trailing bytes and
// the length are then folded together with the splitmix64 finalizer. The value depends only
// on the bytes, not on how they were split between update() calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mixseq {

class Checksum64 {
 public:
  void update(const void* data, size_t size);  // data may be null when size is 0
  // Of all bytes so far; update() may continue afterwards.
  uint64_t value() const;

 private:
  void add_block(const unsigned char* block);  // 32 bytes, one word per lane

  uint64_t lanes_[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull, 0x082EFA98EC4E6C89ull};
  unsigned char pending_[32] = {};
  size_t pending_size_ = 0;
  uint64_t total_size_ = 0;
};

uint64_t checksum64(const void* data, size_t size);

// 16 lowercase hex digits, as dataset.json stores checksums.
std::string checksum_hex(uint64_t checksum);

}  // namespace mixseq
