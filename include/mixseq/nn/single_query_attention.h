// Scaled dot-product attention for one query per row, as a decoding step makes it, in one pass
// over the keys and values (fp32, CPU, no autograd).
//
// Through LibTorch a step is a broadcast product and a sum for the scores, a softmax, and
// another product and sum for the context, each writing a [B, H, S, Dh] or [B, H, S] temporary:
// half of a Transformer beam search at the bench shapes. Here each (row, head) reads its keys
// and values once and keeps the scores in a small buffer.
//
// The keys and values may be read through a row map, as an IncrementalKeyValueCache keeps them
// (nn/incremental_key_value_cache.h): position j of query row b is stored in row rows[b, j], so
// that reordering beams moves the map, not the keys.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <tuple>

#include "mixseq/nn/int8_activation.h"

namespace mixseq {

// Whether single_query_attention computes this step: one query (q [B, H, 1, Dh]), fp32, on the
// CPU, with no gradient to keep, over float keys and values or uint8 codes of them.
bool takes_single_query_attention(const torch::Tensor& q, const torch::Tensor& keys, const torch::Tensor& values);

// q [B, H, 1, Dh]; keys and values [R, H, >= S, Dh] with a contiguous last dimension, float or
// uint8 codes on key_grid and value_grid (read as dequantize_codes reads them); rows
// undefined (row b reads row b, R >= B) or [B, >= S] int64 (any strides; a row's map may be
// one index expanded); S positions are attended;
// key_padding_mask [B, S] bool (true at padding) or undefined. Every row must keep a key.
// -> output [B, H, 1, Dh], and with need_weights the softmax weights [B, H, 1, S] (0 at
// padding), else undefined. Equal to plain_attention (nn/scaled_dot_product_attention.h) up to
// rounding.
std::tuple<torch::Tensor, torch::Tensor> single_query_attention(const torch::Tensor& q, const torch::Tensor& keys,
                                                                const torch::Tensor& values, const torch::Tensor& rows,
                                                                int64_t length, const torch::Tensor& key_padding_mask,
                                                                bool need_weights, const CodeGrid& key_grid = {},
                                                                const CodeGrid& value_grid = {});

}  // namespace mixseq
