// LmStream: language-model training data as B parallel token streams cut into consecutive
// segments, as Transformer-XL reads it (Dai et al. 2019; NVIDIA's LMOrderedIterator).
//
// The corpus (one long token sequence) is split into B equal streams; segment k of stream b
// follows segment k-1 of the same stream, so a model that carries state (recurrent memory)
// from one segment to the next sees continuous text. With data parallelism each rank reads a
// contiguous slice of the B streams. The sequence of segments is a pure function of the
// corpus, the options and the epoch, so position() / seek() resume a run exactly.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "mixseq/util/random.h"

namespace mixseq {

class TokenDataset;

struct LmStreamOptions {
  int64_t batch_size = 16;          // B: parallel streams over all ranks (a multiple of world_size)
  int64_t segment_length = 128;     // T: tokens per segment (Transformer-XL tgt_len)
  bool variable_length = false;     // Transformer-XL: length ~ N(T, std) with p 0.95, else N(T/2, std)
  double variable_length_std = 5;   // standard deviation of the variable length, in tokens
  bool roll = false;                // rotate each stream by a random offset at every epoch start
  uint64_t seed = 1;                // with the epoch number, fixes lengths and rotations
  int64_t rank = 0;                 // this process reads streams [rank*B/W, (rank+1)*B/W)
  int64_t world_size = 1;
};

struct LmSegment {
  torch::Tensor input;   // [B/W, T] int64
  torch::Tensor target;  // [B/W, T] int64: the next token after each input position
  int64_t start = 0;     // stream offset of input[:, 0]
};

class LmStream {
 public:
  // tokens: the whole corpus in order (sentence ends included as eos ids).
  LmStream(const std::vector<int64_t>& tokens, const LmStreamOptions& options);

  struct Position {
    int64_t epoch = 1;
    int64_t segment = 0;  // segments already read in this epoch
  };

  void start_epoch(int64_t epoch);  // lays out (and, with roll, rotates) the streams
  std::optional<LmSegment> next();  // nullopt at the end of the epoch
  Position position() const { return {epoch_, segment_}; }
  void seek(const Position& position);  // start_epoch, then skip to the segment

  int64_t stream_length() const { return stream_length_; }  // tokens per stream

 private:
  int64_t draw_length();

  LmStreamOptions options_;
  int64_t stream_length_;
  torch::Tensor unrolled_;  // [B/W, stream_length] int64, this rank's streams as laid out
  torch::Tensor streams_;   // [B/W, stream_length] int64, this epoch's (rotated) streams
  int64_t epoch_ = 0;
  int64_t segment_ = 0;
  int64_t offset_ = 0;      // stream position of the next segment
  PortableRandom random_{0};
};

// The dataset's sentences, each followed by eos_id, as one token sequence (Transformer-XL
// adds the end-of-sentence symbol between lines of WikiText and PTB).
std::vector<int64_t> concatenate_with_eos(const TokenDataset& dataset, int64_t eos_id);

}  // namespace mixseq
