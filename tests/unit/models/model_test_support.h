// Helpers shared by the model tests.
#pragma once

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mixseq/models/model_config.h"
#include "mixseq/models/seq2seq_model.h"
#include "mixseq/text/vocabulary.h"
#include "util/torch_compat.h"

namespace mixseq::test {

// A small ConvS2S with everything the layer lists allow: an even kernel (asymmetric padding in
// the encoder), width changes (residual projections), a 1x1 convolution, no residual, a residual
// from two layers back, and a decoder layer without attention. Dropout 0.2.
inline FconvConfig small_fconv_config() {
  FconvConfig config;
  config.encoder_embed_dim = 12;
  config.encoder_layers = "[(8, 3)] * 2 + [(10, 2)]";
  config.decoder_embed_dim = 12;
  config.decoder_layers = "[(8, 3), (10, 2), (10, 1, 0), (8, 4, 2)]";
  config.decoder_attention = "[True, False, True, True]";
  config.decoder_out_embed_dim = 6;
  config.dropout = 0.2;
  config.max_positions = 32;
  return config;
}

// A right-padded batch [B, max length] of random non-special tokens below `vocab`.
inline torch::Tensor random_tokens(const std::vector<int64_t>& lengths, int64_t vocab) {
  const int64_t width = *std::max_element(lengths.begin(), lengths.end());
  auto tokens = at::randint(kSpecialSymbolCount, vocab, {static_cast<int64_t>(lengths.size()), width}, at::kLong);
  for (size_t i = 0; i < lengths.size(); ++i) tokens[i].slice(0, lengths[i]).fill_(kPadId);
  return tokens;
}

// bf16 autocast on the CPU for the guard's lifetime.
class CpuAutocast {
 public:
  CpuAutocast() { compat::set_autocast(c10::kCPU, true, at::kBFloat16); }
  ~CpuAutocast() {
    compat::set_autocast(c10::kCPU, false, at::kBFloat16);
    at::autocast::clear_cache();  // the bf16 copies of the weights it made
  }
  CpuAutocast(const CpuAutocast&) = delete;
  CpuAutocast& operator=(const CpuAutocast&) = delete;
};

// Beams reordered within their sentences: a state moved with select_within_sources (the
// encoder's tensors stay) must step exactly as one moved with select. `target` [3·2, T] feeds
// two beams for each of the 3 sentences of `source`.
inline void expect_select_within_sources_equals_select(Seq2SeqModelImpl& model, const torch::Tensor& source,
                                                       const torch::Tensor& source_lengths,
                                                       const torch::Tensor& target) {
  torch::NoGradGuard no_grad;
  auto moved = model.start(source, source_lengths), kept = model.start(source, source_lengths);
  const auto beams = at::arange(3, at::kLong).repeat_interleave(2);  // 3 sentences -> 6 rows
  moved->select(beams);
  kept->select(beams);
  const auto within = at::tensor({1, 1, 2, 3, 5, 4}, at::kLong);  // each row stays in its sentence
  for (int64_t t = 0; t < target.size(1); ++t) {
    if (t == 2) {
      moved->select(within);
      kept->select_within_sources(within);
    }
    const auto a = model.step(*moved, target.select(1, t)), b = model.step(*kept, target.select(1, t));
    EXPECT_TRUE(at::equal(a.logits, b.logits)) << "position " << t;
    EXPECT_TRUE(at::equal(a.attention, b.attention)) << "position " << t;
  }
}

}  // namespace mixseq::test
