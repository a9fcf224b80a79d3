#include "mixseq/nn/sequence_pooling.h"

#include <ATen/ATen.h>

#include <limits>

#include "mixseq/util/error.h"

namespace mixseq {

SequencePooling sequence_pooling(const std::string& name, const std::string& key) {
  if (name == "last") return SequencePooling::kLast;
  if (name == "mean") return SequencePooling::kMean;
  if (name == "max") return SequencePooling::kMax;
  if (name == "concat") return SequencePooling::kConcat;
  throw Error(str_cat(key, " must be last, mean, max or concat, not '", name, "'"));
}

int64_t pooled_size(SequencePooling pooling, int64_t state_size) {
  return pooling == SequencePooling::kConcat ? 3 * state_size : state_size;
}

torch::Tensor pool_sequences(const torch::Tensor& states, const torch::Tensor& lengths, SequencePooling pooling) {
  MIXSEQ_CHECK(states.dim() == 3 && lengths.dim() == 1 && lengths.size(0) == states.size(0),
               "pool_sequences: states must be [B, T, D] and lengths [B], got ", states.sizes(), " and ",
               lengths.sizes());
  const int64_t T = states.size(1);
  const auto lengths_here = lengths.to(states.device(), at::kLong);
  const auto [low, high] = at::aminmax(lengths_here);
  MIXSEQ_CHECK(low.item<int64_t>() >= 1 && high.item<int64_t>() <= T, "pool_sequences: lengths must be in [1, ", T,
               "], got ", low.item<int64_t>(), " .. ", high.item<int64_t>());
  const auto positions = at::arange(T, lengths_here.options());         // [T]
  const auto valid = positions.unsqueeze(0) < lengths_here.unsqueeze(1);  // [B, T]
  const auto last = [&] {
    const auto index = (lengths_here - 1).view({-1, 1, 1}).expand({states.size(0), 1, states.size(2)});
    return states.gather(1, index).squeeze(1);  // [B, D]
  };
  const auto mean = [&] {
    const auto summed = states.masked_fill(~valid.unsqueeze(2), 0).sum(1);  // [B, D]
    return summed / lengths_here.unsqueeze(1).to(states.scalar_type());
  };
  const auto max = [&] {
    return states.masked_fill(~valid.unsqueeze(2), -std::numeric_limits<float>::infinity()).amax(1);  // [B, D]
  };
  switch (pooling) {
    case SequencePooling::kLast: return last();
    case SequencePooling::kMean: return mean();
    case SequencePooling::kMax: return max();
    case SequencePooling::kConcat: return at::cat({last(), max(), mean()}, 1);  // [B, 3 D]
  }
  throw Error("pool_sequences: unknown pooling");
}

}  // namespace mixseq
