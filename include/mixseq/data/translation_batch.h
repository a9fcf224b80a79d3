// TranslationBatch: a batch of sentence pairs as the tensors an encoder-decoder trains on.
//
//   source         [B, S]  x1 .. xn </s>, right-padded with <pad>
//   source_lengths [B]     n + 1
//   target_input   [B, T]  <s> y1 .. ym      (teacher forcing: what the decoder reads)
//   target_output  [B, T]  y1 .. ym </s>     (what it must predict), right-padded with <pad>
//
// Every row ends with </s> on the source side (fairseq, GNMT) so that the encoder sees where
// a sentence stops; the decoder starts from <s>.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace mixseq {

class TokenDataset;

struct TranslationBatch {
  torch::Tensor source;          // [B, S] int64
  torch::Tensor source_lengths;  // [B] int64
  torch::Tensor target_input;    // [B, T] int64; undefined when the batch has no targets
  torch::Tensor target_output;   // [B, T] int64
  std::vector<int64_t> indices;  // dataset index of each row, to put translations back in order
  int64_t source_tokens = 0;     // non-pad tokens in `source`
  int64_t target_tokens = 0;     // non-pad tokens in `target_output`

  TranslationBatch to(const torch::Device& device) const;
};

// Gathers the given examples; `target` may be null (translation of sources only).
TranslationBatch make_translation_batch(const TokenDataset& source, const TokenDataset* target,
                                        const std::vector<int64_t>& indices);

// Source and target lengths of every example as batching counts them (with </s> or <s>).
std::vector<int64_t> model_lengths(const TokenDataset& dataset);

}  // namespace mixseq
