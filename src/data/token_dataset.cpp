#include "mixseq/data/token_dataset.h"

#include <cstring>

#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

constexpr char kMagic[8] = {'M', 'I', 'X', 'S', 'E', 'Q', 'T', 'D'};

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t bytes_per_token;
  uint64_t sequences;
  uint64_t tokens;
  uint64_t vocab_size;
  uint64_t vocab_fingerprint;
  uint64_t reserved[2];
};
static_assert(sizeof(Header) == 64, "the header is 64 bytes on disk");

// Token bytes padded to 8, so that the offsets after them are aligned for u64 loads.
uint64_t padded_token_bytes(uint64_t tokens, uint64_t bytes_per_token) {
  return (tokens * bytes_per_token + 7) / 8 * 8;
}

// Writes `size` bytes and adds them to the checksum.
void write_bytes(std::ostream& out, const void* data, size_t size, Checksum64& checksum) {
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  checksum.update(data, size);
}

template <typename Id>
void write_ids(std::ostream& out, const std::vector<int64_t>& ids, Checksum64& checksum) {
  std::vector<Id> narrow(ids.begin(), ids.end());
  write_bytes(out, narrow.data(), narrow.size() * sizeof(Id), checksum);
}

}  // namespace

TokenDataset::TokenDataset(const std::string& path) : file_(path) {
  const auto corrupt = [&](const auto&... what) {
    return Error(str_cat("'", path, "' is not a usable token dataset: ", what...,
                         "; write it again with `mixseq prepare`"));
  };
  if (file_.size() < sizeof(Header)) throw corrupt("file too short (", file_.size(), " bytes)");
  Header header;
  std::memcpy(&header, file_.data(), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) throw corrupt("bad magic bytes");
  if (header.version != kTokenDatasetVersion)
    throw corrupt("format version ", header.version, ", this mixseq reads version ", kTokenDatasetVersion);
  if (header.bytes_per_token != 2 && header.bytes_per_token != 4)
    throw corrupt("bytes per token is ", header.bytes_per_token, ", expected 2 or 4");
  // The counts are checked against the file before they are multiplied: a corrupt header's products
  // could wrap around to the file's size and send the reader outside the file (found by fuzzing).
  const uint64_t body_size = file_.size() - sizeof(Header);
  if (header.tokens > body_size / header.bytes_per_token || header.sequences >= body_size / sizeof(uint64_t))
    throw corrupt("the header counts ", header.sequences, " sequences and ", header.tokens, " tokens, more than its ",
                  file_.size(), " bytes hold (truncated?)");
  const uint64_t expected_size = sizeof(Header) + padded_token_bytes(header.tokens, header.bytes_per_token) +
                                 (header.sequences + 1) * sizeof(uint64_t);
  if (file_.size() != expected_size)
    throw corrupt("size is ", file_.size(), " bytes, the header implies ", expected_size, " (truncated?)");

  sequences_ = static_cast<int64_t>(header.sequences);
  vocab_size_ = static_cast<int64_t>(header.vocab_size);
  vocab_fingerprint_ = header.vocab_fingerprint;
  bytes_per_token_ = header.bytes_per_token;
  tokens_ = file_.data() + sizeof(Header);
  offsets_ = reinterpret_cast<const uint64_t*>(tokens_ + padded_token_bytes(header.tokens, header.bytes_per_token));
  if (offsets_[0] != 0 || offsets_[sequences_] != header.tokens) throw corrupt("offsets do not span the tokens");
  for (int64_t i = 0; i < sequences_; ++i)
    if (offsets_[i + 1] < offsets_[i]) throw corrupt("offsets decrease at sequence ", i);
}

uint64_t TokenDataset::checksum() const {
  Checksum64 checksum;  // the header last, as the writer knows it last
  checksum.update(file_.data() + sizeof(Header), file_.size() - sizeof(Header));
  checksum.update(file_.data(), sizeof(Header));
  return checksum.value();
}

std::vector<int64_t> TokenDataset::lengths() const {
  std::vector<int64_t> result(sequences_);
  for (int64_t i = 0; i < sequences_; ++i) result[i] = length(i);
  return result;
}

void TokenDataset::copy_sequence(int64_t i, int64_t* out) const {
  MIXSEQ_CHECK(i >= 0 && i < sequences_, "sequence ", i, " is outside '", path(), "' (", sequences_, " sequences)");
  const uint64_t begin = offsets_[i], end = offsets_[i + 1];
  for (uint64_t t = begin; t < end; ++t) {
    uint32_t id;
    if (bytes_per_token_ == 2) {
      uint16_t small;
      std::memcpy(&small, tokens_ + t * 2, 2);
      id = small;
    } else {
      std::memcpy(&id, tokens_ + t * 4, 4);
    }
    MIXSEQ_CHECK(id < vocab_size_, "'", path(), "' is corrupt: sequence ", i, " holds id ", id,
                 " but the vocabulary has ", vocab_size_, " entries");
    *out++ = id;
  }
}

std::vector<int64_t> TokenDataset::sequence(int64_t i) const {
  std::vector<int64_t> ids(length(i));
  copy_sequence(i, ids.data());
  return ids;
}

TokenDatasetWriter::TokenDatasetWriter(const std::string& path, int64_t vocab_size, uint64_t vocab_fingerprint)
    : file_(path),
      vocab_size_(vocab_size),
      vocab_fingerprint_(vocab_fingerprint),
      bytes_per_token_(vocab_size <= 65536 ? 2 : 4) {
  MIXSEQ_CHECK(vocab_size > 0 && vocab_size <= (int64_t{1} << 32), "vocabulary size ", vocab_size,
               " does not fit a token dataset (1..2^32)");
  const Header placeholder{};
  file_.stream().write(reinterpret_cast<const char*>(&placeholder), sizeof placeholder);
}

void TokenDatasetWriter::add(const std::vector<int64_t>& ids) {
  for (const int64_t id : ids)
    MIXSEQ_CHECK(id >= 0 && id < vocab_size_, "token id ", id, " is outside the vocabulary (size ", vocab_size_, ")");
  if (bytes_per_token_ == 2)
    write_ids<uint16_t>(file_.stream(), ids, checksum_);
  else
    write_ids<uint32_t>(file_.stream(), ids, checksum_);
  offsets_.push_back(offsets_.back() + ids.size());
}

uint64_t TokenDatasetWriter::finish() {
  auto& out = file_.stream();
  const uint64_t tokens = offsets_.back();
  const std::string padding(padded_token_bytes(tokens, bytes_per_token_) - tokens * bytes_per_token_, '\0');
  write_bytes(out, padding.data(), padding.size(), checksum_);
  write_bytes(out, offsets_.data(), offsets_.size() * sizeof(uint64_t), checksum_);
  Header header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.version = kTokenDatasetVersion;
  header.bytes_per_token = bytes_per_token_;
  header.sequences = offsets_.size() - 1;
  header.tokens = tokens;
  header.vocab_size = static_cast<uint64_t>(vocab_size_);
  header.vocab_fingerprint = vocab_fingerprint_;
  out.seekp(0);
  write_bytes(out, &header, sizeof header, checksum_);
  file_.commit();
  return checksum_.value();
}

}  // namespace mixseq
