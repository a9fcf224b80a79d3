#include "mixseq/util/checksum.h"

#include <algorithm>
#include <cstring>

namespace mixseq {
namespace {

constexpr uint64_t kWordMultiplier = 0x9E3779B97F4A7C15ull;  // 2^64 / golden ratio, odd
constexpr uint64_t kLaneMultiplier = 0xBF58476D1CE4E5B9ull;  // splitmix64's first, odd

uint64_t rotate_left(uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

// splitmix64's finalizer (Steele et al. 2014): a bijection that spreads every input bit.
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t load_word(const unsigned char* bytes) {  // little-endian, whatever the machine
  uint64_t word = 0;
  for (int i = 7; i >= 0; --i) word = (word << 8) | bytes[i];
  return word;
}

uint64_t lane_round(uint64_t lane, uint64_t word) {
  return rotate_left(lane + word * kWordMultiplier, 31) * kLaneMultiplier;
}

}  // namespace

void Checksum64::add_block(const unsigned char* block) {
  for (int lane = 0; lane < 4; ++lane) lanes_[lane] = lane_round(lanes_[lane], load_word(block + 8 * lane));
}

void Checksum64::update(const void* data, size_t size) {
  // An empty vector's data() may be null, and memcpy from null is undefined even for 0 bytes.
  if (size == 0) return;
  const auto* bytes = static_cast<const unsigned char*>(data);
  total_size_ += size;
  if (pending_size_ > 0) {
    const size_t take = std::min(size, sizeof pending_ - pending_size_);
    std::memcpy(pending_ + pending_size_, bytes, take);
    pending_size_ += take, bytes += take, size -= take;
    if (pending_size_ < sizeof pending_) return;
    add_block(pending_);
    pending_size_ = 0;
  }
  for (; size >= sizeof pending_; bytes += sizeof pending_, size -= sizeof pending_) add_block(bytes);
  std::memcpy(pending_, bytes, size);
  pending_size_ = size;
}

uint64_t Checksum64::value() const {
  uint64_t lanes[4] = {lanes_[0], lanes_[1], lanes_[2], lanes_[3]};
  size_t lane = 0, at = 0;
  for (; at + 8 <= pending_size_; at += 8, ++lane) lanes[lane] = lane_round(lanes[lane], load_word(pending_ + at));
  if (at < pending_size_) {  // the last 1-7 bytes, zero-padded to a word; the length tells the padding apart
    unsigned char tail[8] = {};
    std::memcpy(tail, pending_ + at, pending_size_ - at);
    lanes[lane] = lane_round(lanes[lane], load_word(tail));
  }
  uint64_t folded = mix(total_size_);
  for (const uint64_t value : lanes) folded = mix(folded ^ value);
  return folded;
}

uint64_t checksum64(const void* data, size_t size) {
  Checksum64 checksum;
  checksum.update(data, size);
  return checksum.value();
}

std::string checksum_hex(uint64_t checksum) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, checksum >>= 4) hex[i] = kDigits[checksum & 0xF];
  return hex;
}

}  // namespace mixseq
