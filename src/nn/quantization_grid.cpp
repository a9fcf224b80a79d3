#include "mixseq/nn/quantization_grid.h"

#include <ATen/ATen.h>

#include "mixseq/util/error.h"

namespace mixseq {

QuantizationGrid make_quantization_grid(const torch::Tensor& min, const torch::Tensor& max, int64_t bits,
                                        bool symmetric) {
  MIXSEQ_CHECK(bits >= 2 && bits <= 16, "quantization bits must be in [2, 16], got ", bits);
  MIXSEQ_CHECK(min.sizes() == max.sizes() && min.dim() <= 1, "quantization range: min ", min.sizes(), " and max ",
               max.sizes(), " must both be [] or both [N]");
  QuantizationGrid grid;
  const auto lo = min.to(at::kFloat).clamp_max(0.0), hi = max.to(at::kFloat).clamp_min(0.0);
  if (symmetric) {
    grid.qmax = (int64_t{1} << (bits - 1)) - 1;
    grid.qmin = -grid.qmax;
    grid.scale = at::maximum(lo.abs(), hi) / static_cast<double>(grid.qmax);
  } else {
    grid.qmin = 0;
    grid.qmax = (int64_t{1} << bits) - 1;
    grid.scale = (hi - lo) / static_cast<double>(grid.qmax);
  }
  grid.scale = at::where(grid.scale > 0, grid.scale, at::ones_like(grid.scale));
  grid.zero_point = symmetric ? at::zeros(grid.scale.sizes(), at::kLong)
                              : at::round(-lo / grid.scale).clamp(grid.qmin, grid.qmax).to(at::kLong);
  return grid;
}

torch::Tensor quantize_dequantize(const torch::Tensor& x, const QuantizationGrid& grid) {
  MIXSEQ_CHECK(grid.defined(), "quantize_dequantize: the grid is undefined");
  auto scale = grid.scale.to(x.device());
  auto zero_point = grid.zero_point.to(x.device(), at::kFloat);
  if (grid.per_channel()) {  // [N] -> [N, 1, ...] against x [N, ...]
    MIXSEQ_CHECK(x.dim() >= 1 && x.size(0) == scale.size(0), "quantize_dequantize: a grid of ", scale.size(0),
                 " channels cannot quantize a tensor of shape ", x.sizes());
    std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
    shape[0] = scale.size(0);
    scale = scale.view(shape);
    zero_point = zero_point.view(shape);
  }
  const auto q = at::clamp(at::round(x.to(at::kFloat) / scale) + zero_point, grid.qmin, grid.qmax);
  return ((q - zero_point) * scale).to(x.scalar_type());
}

}  // namespace mixseq
