// TokenDataset: a memory-mapped file of token-id sequences (one per sentence), written once by
// `mixseq prepare` and read by training without loading it into memory.
//
// File layout, little-endian:
//   header   64 bytes: magic "MIXSEQTD", u32 format version, u32 bytes per token (2 or 4),
//            u64 sequences N, u64 tokens, u64 vocabulary size, u64 vocabulary fingerprint,
//            16 zero bytes
//   tokens   u16 or u32 [tokens], sentence after sentence, then zero bytes up to a multiple of 8
//   offsets  u64 [N + 1]: sentence i is tokens[offsets[i], offsets[i+1])
// Tokens come before offsets so the writer can stream sentences without knowing N.
// The vocabulary fingerprint ties a dataset to the vocabulary its ids index; opening checks
// the magic, version and sizes, so a truncated or foreign file is an error, not garbage.
// A flipped byte inside the tokens passes those checks: the writer returns a checksum
// (util/checksum.h) of the bytes after the header, then the header, which the dataset's
// manifest records (data/prepared_data.h) and checksum() recomputes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/util/checksum.h"
#include "mixseq/util/mapped_file.h"
#include "mixseq/util/output_file.h"

namespace mixseq {

constexpr uint32_t kTokenDatasetVersion = 1;

class TokenDataset {
 public:
  explicit TokenDataset(const std::string& path);  // throws mixseq::Error for a bad file

  int64_t size() const { return sequences_; }
  int64_t length(int64_t i) const { return static_cast<int64_t>(offsets_[i + 1] - offsets_[i]); }
  std::vector<int64_t> lengths() const;
  int64_t total_tokens() const { return static_cast<int64_t>(offsets_[sequences_]); }
  int64_t vocab_size() const { return vocab_size_; }
  uint64_t vocab_fingerprint() const { return vocab_fingerprint_; }
  const std::string& path() const { return file_.path(); }
  // Of the whole file (it reads every byte once), to compare with what the writer returned.
  uint64_t checksum() const;

  // Writes sequence i's ids to out[0, length(i)); an id outside the vocabulary throws
  // (the file is corrupt or was edited).
  void copy_sequence(int64_t i, int64_t* out) const;
  std::vector<int64_t> sequence(int64_t i) const;

 private:
  MappedFile file_;
  int64_t sequences_ = 0;
  int64_t vocab_size_ = 0;
  uint64_t vocab_fingerprint_ = 0;
  uint32_t bytes_per_token_ = 0;
  const std::byte* tokens_ = nullptr;
  const uint64_t* offsets_ = nullptr;
};

// Streams sentences into a new TokenDataset file; nothing appears at `path` until finish().
class TokenDatasetWriter {
 public:
  // Ids must be below vocab_size; ids are stored in 2 bytes when vocab_size <= 65536.
  TokenDatasetWriter(const std::string& path, int64_t vocab_size, uint64_t vocab_fingerprint);
  void add(const std::vector<int64_t>& ids);
  // Completes the file and returns its checksum (TokenDataset::checksum).
  uint64_t finish();

 private:
  OutputFile file_;
  int64_t vocab_size_;
  uint64_t vocab_fingerprint_;
  uint32_t bytes_per_token_;
  std::vector<uint64_t> offsets_{0};
  Checksum64 checksum_;  // of the bytes after the header, as written
};

}  // namespace mixseq
