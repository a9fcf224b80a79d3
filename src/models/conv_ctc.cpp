#include "mixseq/models/conv_ctc.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/dropout.h>
#include <torch/nn/init.h>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

int64_t same_padding(int64_t kernel, int64_t dilation) { return kernel / 2 * dilation; }

// Jasper's MaskedConv1d.get_seq_len.
int64_t conv_output_length(int64_t length, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t numerator = length + 2 * same_padding(kernel, dilation) - dilation * (kernel - 1) - 1;
  return (numerator >= 0 ? numerator / stride : -((-numerator + stride - 1) / stride)) + 1;
}

torch::Tensor conv_output_lengths(const torch::Tensor& lengths, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t numerator_shift = 2 * same_padding(kernel, dilation) - dilation * (kernel - 1) - 1;
  return torch::floor_divide(lengths + numerator_shift, stride) + 1;
}

}  // namespace

ConvCtcConfig ConvCtcConfig::wave2letter_plus_large() {
  ConvCtcConfig c;
  c.activation = "clipped_relu";
  c.residual = "none";
  c.channels = {256, 384, 512, 640, 768};
  c.kernels = {11, 13, 17, 21, 25};
  c.dropouts = {0.2, 0.2, 0.2, 0.3, 0.3};
  c.repeat = 3;
  c.prologue_dropout = 0.2;
  c.epilogue_dropout = 0.4;
  return c;
}

ConvCtcConfig ConvCtcConfig::jasper_10x5() { return ConvCtcConfig{}; }

ConvCtcModelImpl::ConvCtcModelImpl(const ConvCtcConfig& config, int64_t vocab_size) : config_(config) {
  const auto& c = config_;
  MIXSEQ_CHECK(c.in_feats >= 1 && vocab_size >= 2, "a conv_ctc model needs in_feats (", c.in_feats,
               ") >= 1 and at least 2 symbols (", vocab_size, ")");
  MIXSEQ_CHECK(c.channels.size() == c.kernels.size() && c.channels.size() == c.dropouts.size(),
               "channels (", c.channels.size(), "), kernels (", c.kernels.size(), ") and dropouts (",
               c.dropouts.size(), ") must list one value per block");
  MIXSEQ_CHECK(c.repeat >= 1 && c.prologue_stride >= 1 && c.epilogue_dilation >= 1 && c.prologue_channels >= 1 &&
                   c.epilogue_channels >= 1 && c.enc_feats >= 1,
               "repeat, prologue_stride, epilogue_dilation and every width of a conv_ctc model must be positive");
  for (size_t b = 0; b < c.channels.size(); ++b)
    MIXSEQ_CHECK(c.channels[b] >= 1 && c.kernels[b] >= 1 && c.kernels[b] % 2 == 1 && c.dropouts[b] >= 0 &&
                     c.dropouts[b] < 1,
                 "block ", b, ": channels (", c.channels[b], ") must be positive, the kernel (", c.kernels[b],
                 ") odd, the dropout (", c.dropouts[b], ") in [0, 1)");
  MIXSEQ_CHECK(c.prologue_kernel % 2 == 1 && c.epilogue_kernel % 2 == 1, "kernel widths must be odd ('same' padding)");

  // prologue
  Block prologue;
  prologue.layers.push_back(make_layer("prologue", c.in_feats, c.prologue_channels, c.prologue_kernel,
                                       c.prologue_stride, 1));
  prologue.dropout = c.prologue_dropout;
  blocks_.push_back(std::move(prologue));
  // blocks
  std::vector<int64_t> outputs = {c.prologue_channels};  // widths of the outputs a dense residual sums
  int64_t in = c.prologue_channels;
  for (size_t b = 0; b < c.channels.size(); ++b) {
    Block block;
    const std::string name = "block" + std::to_string(b);
    for (int64_t r = 0; r < c.repeat; ++r)
      block.layers.push_back(make_layer(name + "_conv" + std::to_string(r), r == 0 ? in : c.channels[b], c.channels[b],
                                        c.kernels[b], 1, 1));
    if (c.residual == "block") {
      block.residuals.push_back(make_layer(name + "_residual0", in, c.channels[b], 1, 1, 1));
    } else if (c.residual == "dense") {
      for (size_t r = 0; r < outputs.size(); ++r)
        block.residuals.push_back(make_layer(name + "_residual" + std::to_string(r), outputs[r], c.channels[b], 1, 1, 1));
    }
    block.dropout = c.dropouts[b];
    blocks_.push_back(std::move(block));
    outputs.push_back(c.channels[b]);
    in = c.channels[b];
  }
  // epilogue
  Block dilated, last;
  dilated.layers.push_back(make_layer("epilogue0", in, c.epilogue_channels, c.epilogue_kernel, 1, c.epilogue_dilation));
  dilated.dropout = c.epilogue_dropout;
  last.layers.push_back(make_layer("epilogue1", c.epilogue_channels, c.enc_feats, 1, 1, 1));
  last.dropout = c.epilogue_dropout;
  blocks_.push_back(std::move(dilated));
  blocks_.push_back(std::move(last));

  decoder_ = register_module("decoder", torch::nn::Conv1d(torch::nn::Conv1dOptions(c.enc_feats, vocab_size, 1)));
  torch::nn::init::xavier_uniform_(decoder_->weight);
}

ConvCtcModelImpl::Layer ConvCtcModelImpl::make_layer(const std::string& name, int64_t in, int64_t out, int64_t kernel,
                                                     int64_t stride, int64_t dilation) {
  Layer layer;
  layer.conv = register_module(name, torch::nn::Conv1d(torch::nn::Conv1dOptions(in, out, kernel)
                                                           .stride(stride)
                                                           .dilation(dilation)
                                                           .padding(same_padding(kernel, dilation))
                                                           .bias(false)));
  torch::nn::init::xavier_uniform_(layer.conv->weight);
  layer.norm = register_module(name + "_norm",
                               torch::nn::BatchNorm1d(torch::nn::BatchNormOptions(out).eps(1e-3).momentum(0.1)));
  return layer;
}

torch::Tensor ConvCtcModelImpl::apply_layer(const Layer& layer, torch::Tensor x, const torch::Tensor& lengths) {
  if (config_.conv_masks) {  // x: [B, C, T]
    const auto positions = torch::arange(x.size(2), lengths.options());
    const auto padding = positions.unsqueeze(0) >= lengths.unsqueeze(1);  // [B, T]
    x = x.masked_fill(padding.unsqueeze(1), 0);
  }
  return layer.norm.ptr()->forward(layer.conv.ptr()->forward(x));
}

torch::Tensor ConvCtcModelImpl::activate(torch::Tensor x, double dropout) const {
  // clamp rather than hardtanh: LibTorch 1.13 has no bf16 backward for hardtanh on the CPU.
  x = config_.activation == "clipped_relu" ? torch::clamp(x, 0.0, 20.0) : torch::relu(x);
  return dropout > 0 ? torch::dropout(x, dropout, is_training()) : x;
}

CtcOutput ConvCtcModelImpl::forward(const torch::Tensor& features, const torch::Tensor& lengths) {
  MIXSEQ_CHECK(features.dim() == 3 && features.size(2) == config_.in_feats, "conv_ctc: features must be [B, T, ",
               config_.in_feats, "], not ", features.sizes());
  torch::Tensor lens = lengths.to(features.device(), torch::kLong);
  std::vector<torch::Tensor> outputs;  // the prologue's and each block's output, for dense residuals
  torch::Tensor x = features.transpose(1, 2);  // [B, F, T]
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Block& block = blocks_[b];
    const torch::Tensor block_lengths = lens;
    torch::Tensor out = x;
    for (size_t l = 0; l < block.layers.size(); ++l) {
      const auto& conv = block.layers[l].conv;
      out = apply_layer(block.layers[l], out, lens);
      lens = conv_output_lengths(lens, conv->options.kernel_size()->at(0), conv->options.stride()->at(0),
                                 conv->options.dilation()->at(0));
      if (l + 1 < block.layers.size()) out = activate(out, block.dropout);
    }
    if (!block.residuals.empty()) {
      const bool dense = config_.residual == "dense";
      for (size_t r = 0; r < block.residuals.size(); ++r)
        out = out + apply_layer(block.residuals[r], dense ? outputs[r] : x, block_lengths);
    }
    out = activate(out, block.dropout);
    if (b + 2 < blocks_.size()) outputs.push_back(out);  // the prologue's and the blocks', not the epilogue's
    x = out;
  }
  auto logits = decoder_->forward(x).transpose(1, 2);  // [B, T', V]
  return {logits, lens};
}

int64_t ConvCtcModelImpl::output_frames(int64_t frames) const {
  return conv_output_length(frames, config_.prologue_kernel, config_.prologue_stride, 1);
}

}  // namespace mixseq
