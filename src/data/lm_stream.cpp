#include "mixseq/data/lm_stream.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "mixseq/data/token_dataset.h"
#include "mixseq/util/error.h"

namespace mixseq {

LmStream::LmStream(const std::vector<int64_t>& tokens, const LmStreamOptions& options) : options_(options) {
  const int64_t streams = options.batch_size;
  MIXSEQ_CHECK(streams >= 1 && options.segment_length >= 1, "LM stream: batch_size (", streams,
               ") and segment_length (", options.segment_length, ") must be positive");
  MIXSEQ_CHECK(options.world_size >= 1 && options.rank >= 0 && options.rank < options.world_size, "rank ",
               options.rank, " is outside world size ", options.world_size);
  MIXSEQ_CHECK(streams % options.world_size == 0, "LM stream: batch_size (", streams,
               ") must be a multiple of the world size (", options.world_size, ")");
  stream_length_ = static_cast<int64_t>(tokens.size()) / streams;  // the tail that does not fill a row is dropped
  MIXSEQ_CHECK(stream_length_ >= 2, "LM stream: ", tokens.size(), " tokens are too few for ", streams,
               " streams; use a smaller batch_size");
  const int64_t local = streams / options.world_size;
  const auto all = torch::from_blob(const_cast<int64_t*>(tokens.data()), {streams, stream_length_}, torch::kLong);
  unrolled_ = all.narrow(0, options.rank * local, local).clone();  // [B/W, L]
  start_epoch(1);
}

void LmStream::start_epoch(int64_t epoch) {
  epoch_ = epoch;
  segment_ = 0;
  offset_ = 0;
  random_ = PortableRandom(derive_seed(options_.seed, static_cast<uint64_t>(epoch)));
  if (!options_.roll) {
    streams_ = unrolled_;
    return;
  }
  // NVIDIA's Transformer-XL --roll: each stream starts at a random point of its own text, so
  // that segment boundaries fall elsewhere every epoch. Shifts are drawn for all B streams,
  // so a stream's shift does not depend on the number of ranks.
  const int64_t local = unrolled_.size(0);
  std::vector<int64_t> shifts(options_.batch_size);
  for (auto& shift : shifts) shift = random_.uniform(0, stream_length_ - 1);
  streams_ = torch::empty_like(unrolled_);
  for (int64_t b = 0; b < local; ++b)
    streams_[b].copy_(unrolled_[b].roll(-shifts[options_.rank * local + b]));
}

int64_t LmStream::draw_length() {
  const int64_t target = options_.segment_length;
  if (!options_.variable_length) return target;
  // Transformer-XL get_varlen_iter: usually T, sometimes T/2, jittered, within [5, T + 3 std].
  const double mean = random_.uniform_real() < 0.95 ? static_cast<double>(target) : target / 2.0;
  const auto drawn = static_cast<int64_t>(random_.normal(mean, options_.variable_length_std));
  const auto longest = target + static_cast<int64_t>(3 * options_.variable_length_std);
  return std::min(longest, std::max<int64_t>(5, drawn));
}

std::optional<LmSegment> LmStream::next() {
  if (offset_ >= stream_length_ - 1) return std::nullopt;
  const int64_t length = std::min(draw_length(), stream_length_ - 1 - offset_);
  LmSegment segment;
  segment.start = offset_;
  segment.input = streams_.narrow(1, offset_, length);       // [B/W, T]
  segment.target = streams_.narrow(1, offset_ + 1, length);  // [B/W, T]
  offset_ += length;
  ++segment_;
  return segment;
}

void LmStream::seek(const Position& position) {
  start_epoch(position.epoch);
  for (int64_t k = 0; k < position.segment; ++k)
    MIXSEQ_CHECK(next().has_value(), "LM stream: cannot resume at segment ", position.segment, " of epoch ",
                 position.epoch, ": the epoch has only ", k, " segments (different data or options?)");
}

std::vector<int64_t> concatenate_with_eos(const TokenDataset& dataset, int64_t eos_id) {
  std::vector<int64_t> tokens(static_cast<size_t>(dataset.total_tokens() + dataset.size()));
  int64_t* out = tokens.data();
  for (int64_t i = 0; i < dataset.size(); ++i) {
    dataset.copy_sequence(i, out);
    out += dataset.length(i);
    *out++ = eos_id;
  }
  return tokens;
}

}  // namespace mixseq
