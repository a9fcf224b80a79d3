// Whether a tensor is still the one a derived copy was made from, unchanged: for caches that keep
// a weight laid out otherwise between its changes (nn/cpu_float_linear.h's TransposedWeight,
// nn/lstm_recurrence.h's LstmPanelCache).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace mixseq {

// What identifies a tensor's elements as they are now: its storage, held so that its memory is
// not reused under it while the identity lives, and where in it the tensor lies (data pointer,
// sizes, strides), and its version counter. A tensor with the same storage, data pointer, sizes and
// strides reads the same elements; views share their base's version counter, so a write through
// any of them (in-place ops, and mixseq's fused optimizer steps, which move it as they do) is
// seen. Not thread-safe: a cache that is read from several threads holds its own lock.
class TensorIdentity {
 public:
  // Matches no tensor.
  TensorIdentity() = default;
  // `tensor` as it is now; an undefined tensor: as the default, matching none.
  explicit TensorIdentity(const torch::Tensor& tensor);

  // Whether `tensor` is the tensor this was made from, unwritten since.
  bool matches(const torch::Tensor& tensor) const;

 private:
  c10::Storage storage_;
  const void* data_ = nullptr;
  std::vector<int64_t> sizes_, strides_;
  int64_t version_ = -1;
};

}  // namespace mixseq
