#include "mixseq/nn/hashed_dropout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include "mixseq/nn/bf16_rows.h"
#include "mixseq/util/error.h"
#include "util/vector_clones.h"

namespace mixseq {
namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;  // splitmix64's increment

// splitmix64's output function (Steele, Lea and Flood 2014): the state after `index + 1` steps
// from `seed` is seed + (index + 1) * kGolden.
inline uint64_t splitmix64(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * kGolden;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t next_seed() {
  auto* generator = at::check_generator<at::CPUGeneratorImpl>(at::detail::getDefaultCPUGenerator());
  std::lock_guard<std::mutex> lock(generator->mutex_);
  return generator->random64();
}

// An element is kept when the top 32 bits of its hash are at least p * 2^32.
uint32_t keep_threshold(double p) { return static_cast<uint32_t>(std::min(std::ldexp(p, 32), 4294967295.0)); }

inline bool kept(uint64_t seed, int64_t index, uint32_t threshold) {
  return static_cast<uint32_t>(splitmix64(seed, static_cast<uint64_t>(index)) >> 32) >= threshold;
}

struct DropoutDraw {
  uint64_t seed;
  uint32_t threshold;  // keep_threshold(p)
  bool relu;
};

// y = x * mask and mask in {0, scale} for the elements first .. first + n - 1, an element kept
// when its draw is (and, with relu, when x > 0).
template <typename scalar_t>
void drop_elements(const scalar_t* x, scalar_t* y, scalar_t* mask, int64_t first, int64_t n, const DropoutDraw& draw,
                   at::opmath_type<scalar_t> scale) {
  using math_t = at::opmath_type<scalar_t>;
  for (int64_t i = 0; i < n; ++i) {
    const auto value = static_cast<math_t>(x[i]);
    const math_t keep = kept(draw.seed, first + i, draw.threshold) && (!draw.relu || value > math_t(0)) ? scale : math_t(0);
    mask[i] = static_cast<scalar_t>(keep);
    y[i] = static_cast<scalar_t>(value * keep);
  }
}

template <bool relu>
void drop_float_loop(const float* __restrict x, float* __restrict y, float* __restrict mask, int64_t first, int64_t n,
                     uint64_t seed, uint32_t threshold, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    const float keep = kept(seed, first + i, threshold) && (!relu || x[i] > 0.0f) ? scale : 0.0f;
    mask[i] = keep;
    y[i] = x[i] * keep;
  }
}

// drop_elements for fp32, in SIMD registers (the relu test hoisted out of the loop).
MIXSEQ_VECTOR_CLONES
void drop_floats(const float* x, float* y, float* mask, int64_t first, int64_t n, const DropoutDraw& draw,
                 float scale) {
  if (draw.relu) {
    drop_float_loop<true>(x, y, mask, first, n, draw.seed, draw.threshold, scale);
  } else {
    drop_float_loop<false>(x, y, mask, first, n, draw.seed, draw.threshold, scale);
  }
}

// bf16 through fp32 chunks, widened and rounded back in SIMD registers (nn/bf16_rows.h): the
// same values as converting each element, which kept the loop scalar and ~10x slower than fp32's.
void drop_bf16(const c10::BFloat16* x, c10::BFloat16* y, c10::BFloat16* mask, int64_t first, int64_t n,
               const DropoutDraw& draw, float scale) {
  constexpr int64_t kChunk = 512;
  float x_chunk[kChunk], y_chunk[kChunk], mask_chunk[kChunk];
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    const int64_t count = std::min(kChunk, n - begin);
    widen_row(x + begin, count, x_chunk);
    drop_floats(x_chunk, y_chunk, mask_chunk, first + begin, count, draw, scale);
    narrow_row(y_chunk, count, y + begin);
    narrow_row(mask_chunk, count, mask + begin);
  }
}

template <typename scalar_t>
void dropout_kernel(const scalar_t* x, scalar_t* y, scalar_t* mask, int64_t n, double p, bool relu) {
  const DropoutDraw draw{next_seed(), keep_threshold(p), relu};
  const auto scale = static_cast<at::opmath_type<scalar_t>>(1.0 / (1.0 - p));
  at::parallel_for(0, n, 16384, [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<scalar_t, float>) {
      drop_floats(x + begin, y + begin, mask + begin, begin, end - begin, draw, scale);
    } else if constexpr (std::is_same_v<scalar_t, c10::BFloat16>) {
      drop_bf16(x + begin, y + begin, mask + begin, begin, end - begin, draw, scale);
    } else {
      drop_elements<scalar_t>(x + begin, y + begin, mask + begin, begin, end - begin, draw, scale);
    }
  });
}

std::pair<torch::Tensor, torch::Tensor> output_and_mask(const torch::Tensor& x, double p, bool relu) {
  const auto input = x.contiguous();
  auto y = at::empty_like(input, at::MemoryFormat::Contiguous);
  auto mask = at::empty_like(input, at::MemoryFormat::Contiguous);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, input.scalar_type(), "mixseq::hashed_dropout", [&] {
    dropout_kernel<scalar_t>(input.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), mask.data_ptr<scalar_t>(),
                             input.numel(), p, relu);
  });
  return {y, mask};
}

class HashedDropout : public torch::autograd::Function<HashedDropout> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x, double p,
                               bool relu) {
    auto [y, mask] = output_and_mask(x, p, relu);
    context->save_for_backward({mask});
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto mask = context->get_saved_variables()[0];
    return {gradients[0] * mask, torch::Tensor(), torch::Tensor()};
  }
};

// The residual add: y = x + branch * keep, keep the same draw as hashed_dropout(branch)'s.
MIXSEQ_VECTOR_CLONES
void add_dropped_floats(const float* __restrict x, const float* __restrict branch, float* __restrict y, int64_t first,
                        int64_t n, uint64_t seed, uint32_t threshold, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    y[i] = x[i] + branch[i] * (kept(seed, first + i, threshold) ? scale : 0.0f);
  }
}

// Its backward for the branch: out = grad * keep, the draw recomputed rather than stored.
MIXSEQ_VECTOR_CLONES
void scale_kept_floats(const float* __restrict grad, float* __restrict out, int64_t first, int64_t n, uint64_t seed,
                       uint32_t threshold, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = grad[i] * (kept(seed, first + i, threshold) ? scale : 0.0f);
  }
}

// x + hashed_dropout(branch) in one pass: x and the output fp32, the branch fp32 or bf16 (widened
// in chunks; its dropped values are not rounded to bf16 before the add).
class ResidualDropout : public torch::autograd::Function<ResidualDropout> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& branch, double p) {
    const auto residual = x.contiguous(), added = branch.contiguous();
    auto y = at::empty_like(residual, at::MemoryFormat::Contiguous);
    const uint64_t seed = next_seed();
    const auto threshold = keep_threshold(p);
    const auto scale = static_cast<float>(1.0 / (1.0 - p));
    const float* in = residual.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const bool bf16 = added.scalar_type() == at::kBFloat16;
    at::parallel_for(0, y.numel(), 16384, [&](int64_t begin, int64_t end) {
      if (!bf16) {
        add_dropped_floats(in + begin, added.data_ptr<float>() + begin, out + begin, begin, end - begin, seed,
                           threshold, scale);
        return;
      }
      constexpr int64_t kChunk = 512;
      float chunk[kChunk];
      for (int64_t i = begin; i < end; i += kChunk) {
        const int64_t count = std::min(kChunk, end - i);
        widen_row(added.data_ptr<at::BFloat16>() + i, count, chunk);
        add_dropped_floats(in + i, chunk, out + i, i, count, seed, threshold, scale);
      }
    });
    context->saved_data["seed"] = static_cast<int64_t>(seed);  // backward draws again from it
    context->saved_data["p"] = p;
    context->saved_data["bf16"] = bf16;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto grad = gradients[0].contiguous();
    const auto seed = static_cast<uint64_t>(context->saved_data["seed"].toInt());
    const double p = context->saved_data["p"].toDouble();
    const auto threshold = keep_threshold(p);
    const auto scale = static_cast<float>(1.0 / (1.0 - p));
    const bool bf16 = context->saved_data["bf16"].toBool();
    auto grad_branch = at::empty_like(grad, grad.options().dtype(bf16 ? at::kBFloat16 : at::kFloat));
    const float* in = grad.data_ptr<float>();
    at::parallel_for(0, grad.numel(), 16384, [&](int64_t begin, int64_t end) {
      if (!bf16) {
        scale_kept_floats(in + begin, grad_branch.data_ptr<float>() + begin, begin, end - begin, seed, threshold, scale);
        return;
      }
      constexpr int64_t kChunk = 512;
      float chunk[kChunk];
      for (int64_t i = begin; i < end; i += kChunk) {
        const int64_t count = std::min(kChunk, end - i);
        scale_kept_floats(in + i, chunk, i, count, seed, threshold, scale);
        narrow_row(chunk, count, grad_branch.data_ptr<at::BFloat16>() + i);
      }
    });
    return {gradients[0], grad_branch, torch::Tensor()};
  }
};

void check_probability(double p) {
  MIXSEQ_CHECK(p >= 0.0 && p < 1.0, "dropout probability must be in [0, 1), got ", p);
}

}  // namespace

torch::Tensor hashed_dropout(const torch::Tensor& x, double p, bool training) {
  check_probability(p);
  if (!training || p == 0.0) return x;
  if (!x.device().is_cpu()) return at::dropout(x, p, /*train=*/true);
  return HashedDropout::apply(x, p, /*relu=*/false);
}

std::pair<torch::Tensor, torch::Tensor> hashed_dropout_with_mask(const torch::Tensor& x, double p) {
  check_probability(p);
  MIXSEQ_CHECK(x.device().is_cpu(), "hashed_dropout_with_mask runs on the CPU, got a tensor on ", x.device());
  return output_and_mask(x, p, /*relu=*/false);
}

torch::Tensor residual_dropout(const torch::Tensor& x, const torch::Tensor& branch, double p, bool training) {
  check_probability(p);
  const bool fused = training && p > 0.0 && x.device().is_cpu() && branch.device().is_cpu() &&
                     x.scalar_type() == at::kFloat &&
                     (branch.scalar_type() == at::kFloat || branch.scalar_type() == at::kBFloat16) &&
                     x.sizes() == branch.sizes();
  if (!fused) return x + hashed_dropout(branch, p, training);
  return ResidualDropout::apply(x, branch, p);
}

torch::Tensor hashed_relu_dropout(const torch::Tensor& x, double p, bool training) {
  check_probability(p);
  if (!training || p == 0.0) return at::relu(x);
  if (!x.device().is_cpu()) return at::dropout(at::relu(x), p, /*train=*/true);
  return HashedDropout::apply(x, p, /*relu=*/true);
}

}  // namespace mixseq
