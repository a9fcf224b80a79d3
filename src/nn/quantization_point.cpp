#include "mixseq/nn/quantization_point.h"

#include "mixseq/util/error.h"

namespace mixseq {

torch::Tensor QuantizationPointImpl::forward(const torch::Tensor& x) {
  if (observer_) observer_(x);
  if (!grid_.defined()) return x;
  return quantize_dequantize(x, grid_);
}

void QuantizationPointImpl::set_grid(const QuantizationGrid& grid) {
  MIXSEQ_CHECK(!grid.defined() || !grid.per_channel(), "quantization point: activations take a per-tensor grid");
  grid_ = grid;
}

torch::Tensor through(QuantizationPointImpl* point, const torch::Tensor& x) {
  return point ? point->forward(x) : x;
}

}  // namespace mixseq
