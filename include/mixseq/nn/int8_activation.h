// Int8 activations: moving a float activation onto its quint8 grid and back, the two steps
// around every int8 product (nn/quantizable_linear.h).
//
// ATen has the same two operations (at::quantize_per_tensor, Tensor::dequantize), but where
// LibTorch is built without FBGEMM (Debian's 1.13, ARM) they are scalar loops: at beam-search
// shapes they cost as much as the int8 product itself (docs/quantization.md, "Speed"). These
// are the same arithmetic as ATen's reference path (q = clamp(zero_point + nearbyint(x * (1/scale)),
// 0, 255) with 1/scale in fp32; x = (q - zero_point) * scale), bit for bit, compiled for AVX-512
// and AVX2 besides the baseline, picked at load time.
//
// Thread-safe; CPU tensors only.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <tuple>

namespace mixseq {

// x: a float CPU tensor of any shape -> quint8 of the same shape with `scale` and `zero_point`.
torch::Tensor quantize_activation(const torch::Tensor& x, double scale, int64_t zero_point);

// q: a per-tensor quint8 CPU tensor -> float of the same shape.
torch::Tensor dequantize_activation(const torch::Tensor& q);

// The grid of an activation kept as plain uint8 codes (a uint8 tensor, which every ATen op
// takes, unlike quint8): value = (code - zero_point) * scale, in float as dequantize_activation.
struct CodeGrid {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// q: a per-tensor quint8 CPU tensor -> its codes as uint8 of the same shape, and their grid.
std::tuple<torch::Tensor, CodeGrid> activation_codes(const torch::Tensor& q);

// codes: uint8 on the CPU, any shape and strides -> float, equal to dequantize_activation's.
torch::Tensor dequantize_codes(const torch::Tensor& codes, const CodeGrid& grid);

}  // namespace mixseq
