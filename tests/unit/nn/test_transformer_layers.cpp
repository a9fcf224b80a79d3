// The Transformer layers against LibTorch's own torch::nn::TransformerEncoderLayer and
// TransformerDecoderLayer (the paper's post-norm layers, as PyTorch implements them): with the
// same weights, the same outputs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/transformerlayer.h>

#include <limits>
#include <string>

#include "mixseq/nn/transformer_decoder_layer.h"
#include "mixseq/nn/transformer_encoder_layer.h"

namespace mixseq {
namespace {

constexpr int64_t kLayerWidth = 16, kLayerHeads = 4, kLayerFfn = 24;

TransformerLayerOptions layer_options() {
  TransformerLayerOptions options;
  options.embed_dim = kLayerWidth;
  options.ffn_dim = kLayerFfn;
  options.num_heads = kLayerHeads;
  options.dropout = 0;
  return options;
}

// Copies mixseq's attention `prefix` (q/k/v/out_proj) into PyTorch's `torch_prefix`
// (in_proj_weight/bias holding q, k, v stacked, out_proj).
void copy_attention(const torch::nn::Module& ours, const std::string& prefix, torch::nn::Module& theirs,
                    const std::string& torch_prefix) {
  const auto mine = ours.named_parameters();
  auto target = theirs.named_parameters();
  torch::NoGradGuard no_grad;
  target[torch_prefix + ".in_proj_weight"].copy_(at::cat(
      {mine[prefix + ".q_proj.weight"], mine[prefix + ".k_proj.weight"], mine[prefix + ".v_proj.weight"]}));
  target[torch_prefix + ".in_proj_bias"].copy_(
      at::cat({mine[prefix + ".q_proj.bias"], mine[prefix + ".k_proj.bias"], mine[prefix + ".v_proj.bias"]}));
  target[torch_prefix + ".out_proj.weight"].copy_(mine[prefix + ".out_proj.weight"]);
  target[torch_prefix + ".out_proj.bias"].copy_(mine[prefix + ".out_proj.bias"]);
}

// Copies parameter `from` of ours into `to` of theirs.
void copy_parameter(const torch::nn::Module& ours, const std::string& from, torch::nn::Module& theirs,
                    const std::string& to) {
  torch::NoGradGuard no_grad;
  theirs.named_parameters()[to].copy_(ours.named_parameters()[from]);
}

void copy_feed_forward_and_norm(const torch::nn::Module& ours, torch::nn::Module& theirs,
                                const std::string& final_norm) {
  for (const char* part : {"weight", "bias"}) {
    copy_parameter(ours, std::string("fc1.") + part, theirs, std::string("linear1.") + part);
    copy_parameter(ours, std::string("fc2.") + part, theirs, std::string("linear2.") + part);
    copy_parameter(ours, std::string("final_layer_norm.") + part, theirs, final_norm + "." + part);
  }
}

// Layer norms start at (1, 0): give them other values, so a norm applied in the wrong place shows.
void randomize_layer_norms(torch::nn::Module& layer) {
  torch::NoGradGuard no_grad;
  for (auto& p : layer.named_parameters())
    if (p.key().find("layer_norm") != std::string::npos) p.value().uniform_(0.5, 1.5);
}

TEST(TransformerLayers, EncoderLayerEqualsLibTorchs) {
  at::manual_seed(3);
  TransformerEncoderLayer ours(layer_options());
  randomize_layer_norms(*ours);
  torch::nn::TransformerEncoderLayer theirs(
      torch::nn::TransformerEncoderLayerOptions(kLayerWidth, kLayerHeads).dim_feedforward(kLayerFfn).dropout(0));
  copy_attention(*ours, "self_attn", *theirs, "self_attn");
  copy_parameter(*ours, "self_attn_layer_norm.weight", *theirs, "norm1.weight");
  copy_parameter(*ours, "self_attn_layer_norm.bias", *theirs, "norm1.bias");
  copy_feed_forward_and_norm(*ours, *theirs, "norm2");
  ours->eval();
  theirs->eval();

  const auto x = at::randn({2, 5, kLayerWidth});                            // [B, S, D]
  const auto pad = at::tensor({0, 0, 0, 0, 0, 0, 0, 0, 1, 1}).to(at::kBool).view({2, 5});  // [B, S]
  // LibTorch's layers take [S, B, D].
  const auto expected = theirs->forward(x.transpose(0, 1), /*src_mask=*/torch::Tensor(), pad).transpose(0, 1);
  const auto actual = ours(x, pad);
  const auto real = pad.logical_not().unsqueeze(-1);  // padded positions' outputs are meaningless
  EXPECT_TRUE(at::allclose(actual.masked_fill(~real, 0), expected.masked_fill(~real, 0), 1e-5, 1e-5))
      << (actual - expected).abs().max();
}

TEST(TransformerLayers, DecoderLayerEqualsLibTorchs) {
  at::manual_seed(4);
  TransformerDecoderLayer ours(layer_options());
  randomize_layer_norms(*ours);
  torch::nn::TransformerDecoderLayer theirs(
      torch::nn::TransformerDecoderLayerOptions(kLayerWidth, kLayerHeads).dim_feedforward(kLayerFfn).dropout(0));
  copy_attention(*ours, "self_attn", *theirs, "self_attn");
  copy_attention(*ours, "encoder_attn", *theirs, "multihead_attn");
  for (const char* part : {"weight", "bias"}) {
    copy_parameter(*ours, std::string("self_attn_layer_norm.") + part, *theirs, std::string("norm1.") + part);
    copy_parameter(*ours, std::string("encoder_attn_layer_norm.") + part, *theirs, std::string("norm2.") + part);
  }
  copy_feed_forward_and_norm(*ours, *theirs, "norm3");
  ours->eval();
  theirs->eval();

  const int64_t T = 4;
  const auto target = at::randn({2, T, kLayerWidth});                                    // [B, T, D]
  const auto memory = at::randn({2, 6, kLayerWidth});                                    // [B, S, D]
  const auto source_pad = at::tensor({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}).to(at::kBool).view({2, 6});
  const auto causal = at::full({T, T}, -std::numeric_limits<float>::infinity()).triu(1);  // [T, T] additive
  const auto expected = theirs
                            ->forward(target.transpose(0, 1), memory.transpose(0, 1), causal,
                                      /*memory_mask=*/torch::Tensor(), /*tgt_key_padding_mask=*/torch::Tensor(),
                                      source_pad)
                            .transpose(0, 1);
  IncrementalKeyValueCache self_cache;
  const auto actual = std::get<0>(ours(target, self_cache, ours->project_encoder_output(memory), source_pad));
  EXPECT_TRUE(at::allclose(actual, expected, 1e-5, 1e-5)) << (actual - expected).abs().max();
}

}  // namespace
}  // namespace mixseq
