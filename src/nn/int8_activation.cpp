#include "mixseq/nn/int8_activation.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>

#include "mixseq/util/error.h"
#include "util/vector_clones.h"

namespace mixseq {
namespace {

// Elements per parallel chunk: below this, one thread does it all.
constexpr int64_t kGrain = 32768;

MIXSEQ_VECTOR_CLONES
void quantize_loop(const float* x, uint8_t* q, int64_t n, float inverse_scale, float zero_point) {
  for (int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<int32_t>(std::nearbyint(x[i] * inverse_scale) + zero_point);
    q[i] = static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
  }
}

MIXSEQ_VECTOR_CLONES
void dequantize_loop(const uint8_t* q, float* x, int64_t n, float scale, int32_t zero_point) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<int32_t>(q[i]) - zero_point) * scale;
}

}  // namespace

torch::Tensor quantize_activation(const torch::Tensor& x, double scale, int64_t zero_point) {
  MIXSEQ_CHECK(x.device().is_cpu() && x.scalar_type() == at::kFloat, "quantize_activation: a float CPU tensor is ",
               "needed, got ", x.scalar_type(), " on ", x.device());
  MIXSEQ_CHECK(zero_point >= 0 && zero_point <= 255, "quantize_activation: zero point ", zero_point,
               " is outside quint8's [0, 255]");
  const auto in = x.contiguous();
  auto q = at::_empty_affine_quantized(in.sizes(), in.options().dtype(at::kQUInt8), scale, zero_point);
  const float* src = in.data_ptr<float>();
  auto* dst = reinterpret_cast<uint8_t*>(q.data_ptr<c10::quint8>());
  // ATen's reference quantize_val: the reciprocal in fp32, then x times it.
  const float inverse_scale = 1.0f / static_cast<float>(scale);
  at::parallel_for(0, in.numel(), kGrain, [&](int64_t begin, int64_t end) {
    quantize_loop(src + begin, dst + begin, end - begin, inverse_scale, static_cast<float>(zero_point));
  });
  return q;
}

namespace {

torch::Tensor dequantized(const uint8_t* src, const torch::Tensor& like, const CodeGrid& grid) {
  auto x = at::empty(like.sizes(), like.options().dtype(at::kFloat));
  float* dst = x.data_ptr<float>();
  at::parallel_for(0, like.numel(), kGrain, [&](int64_t begin, int64_t end) {
    dequantize_loop(src + begin, dst + begin, end - begin, grid.scale, grid.zero_point);
  });
  return x;
}

void check_per_tensor_quint8(const torch::Tensor& q, const char* caller) {
  MIXSEQ_CHECK(q.device().is_cpu() && q.scalar_type() == at::kQUInt8 && q.qscheme() == at::kPerTensorAffine, caller,
               ": a per-tensor quint8 CPU tensor is needed, got ", q.scalar_type(), " on ", q.device());
}

CodeGrid grid_of(const torch::Tensor& q) {
  return {static_cast<float>(q.q_scale()), static_cast<int32_t>(q.q_zero_point())};
}

}  // namespace

torch::Tensor dequantize_activation(const torch::Tensor& q) {
  check_per_tensor_quint8(q, "dequantize_activation");
  const auto in = q.contiguous();
  return dequantized(reinterpret_cast<const uint8_t*>(in.data_ptr<c10::quint8>()), in, grid_of(in));
}

std::tuple<torch::Tensor, CodeGrid> activation_codes(const torch::Tensor& q) {
  check_per_tensor_quint8(q, "activation_codes");
  return {q.int_repr(), grid_of(q)};
}

torch::Tensor dequantize_codes(const torch::Tensor& codes, const CodeGrid& grid) {
  MIXSEQ_CHECK(codes.device().is_cpu() && codes.scalar_type() == at::kByte,
               "dequantize_codes: uint8 codes on the CPU are needed, got ", codes.scalar_type(), " on ",
               codes.device());
  const auto in = codes.contiguous();
  return dequantized(in.data_ptr<uint8_t>(), in, grid);
}

}  // namespace mixseq
