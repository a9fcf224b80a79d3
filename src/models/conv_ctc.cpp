#include "mixseq/models/conv_ctc.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/init.h>

#include <cstdint>
#include <memory>
#include <mutex>

#include "mixseq/nn/batch_norm_affine.h"
#include "mixseq/nn/clipped_relu.h"
#include "mixseq/nn/conv1d_products.h"
#include "mixseq/nn/hashed_dropout.h"
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

torch::Tensor ConvCtcModelImpl::mask(const torch::Tensor& x, const torch::Tensor& lengths) const {
  // x: [B, C, T]; nothing to do where every utterance fills the batch
  if (!config_.conv_masks || lengths.min().item<int64_t>() >= x.size(2)) return x;
  const auto positions = torch::arange(x.size(2), lengths.options());
  const auto padding = positions.unsqueeze(0) >= lengths.unsqueeze(1);  // [B, T]
  return x.masked_fill(padding.unsqueeze(1), 0);
}

torch::Tensor ConvCtcModelImpl::apply_layer(const Layer& layer, const torch::Tensor& x, const torch::Tensor& lengths) {
  const auto& conv = *layer.conv;
  const int64_t kernel = conv.options.kernel_size()->at(0), dilation = conv.options.dilation()->at(0);
  const auto y = conv1d_for_training(mask(x, lengths), conv.weight, conv.bias, conv.options.stride()->at(0),
                                     same_padding(kernel, dilation), dilation);
  return layer.norm.ptr()->forward(y);
}

ConvCtcModelImpl::FoldedConv ConvCtcModelImpl::fold(const Layer& layer, const Layer* merged) const {
  const auto& conv = *layer.conv;
  FoldedConv folded;
  folded.stride = conv.options.stride()->at(0);
  folded.dilation = conv.options.dilation()->at(0);
  const auto norm = batch_norm_affine(*layer.norm);
  folded.weight = conv.weight * norm.scale.view({-1, 1, 1});
  folded.bias = norm.shift;
  if (merged != nullptr) {  // a 1x1 convolution of the same input: its centre tap
    const auto merged_norm = batch_norm_affine(*merged->norm);
    folded.weight.select(2, conv.options.kernel_size()->at(0) / 2)
        .add_(merged->conv->weight.select(2, 0) * merged_norm.scale.view({-1, 1}));
    folded.bias = folded.bias + merged_norm.shift;
  }
  folded.weight = folded.weight.contiguous();
  return folded;
}

std::shared_ptr<ConvCtcModelImpl::FoldedModel> ConvCtcModelImpl::folded_model() {
  std::vector<int64_t> versions;
  for (const auto& tensor : parameters()) versions.push_back(tensor._version());
  for (const auto& tensor : buffers()) versions.push_back(tensor._version());
  std::lock_guard<std::mutex> lock(fold_mutex_);
  if (folded_ && folded_->versions == versions) return folded_;
  auto model = std::make_shared<FoldedModel>();
  model->versions = std::move(versions);
  const bool dense = config_.residual == "dense";
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Block& block = blocks_[b];
    FoldedBlock folded;
    // With one layer, the residual of the block's input ("block", or the latest output for "dense")
    // reads what the layer reads.
    const size_t merge = block.layers.size() == 1 && !block.residuals.empty() ? block.residuals.size() - 1 : SIZE_MAX;
    for (size_t l = 0; l < block.layers.size(); ++l)
      folded.layers.push_back(fold(block.layers[l], l == 0 && merge != SIZE_MAX ? &block.residuals[merge] : nullptr));
    for (size_t r = 0; r < block.residuals.size(); ++r) {
      if (r == merge) continue;
      const FoldedConv residual = fold(block.residuals[r], nullptr);
      folded.residuals.push_back(residual.weight.squeeze(2).contiguous());
      folded.residual_inputs.push_back(dense ? r : SIZE_MAX);
      folded.layers.back().bias += residual.bias;
    }
    model->blocks.push_back(std::move(folded));
  }
  folded_ = model;
  return model;
}

torch::Tensor ConvCtcModelImpl::apply_folded(FoldedConv& conv, const torch::Tensor& x) {
  const int64_t taps = conv.weight.size(2), dilation = conv.dilation;
  const int64_t padding = same_padding(taps, dilation), span = (taps - 1) * dilation + 1;
  const int64_t out_frames = x.size(2) + 2 * padding - span + 1;
  if (taps == 1 && conv.stride == 1) {  // a GEMM per utterance, whatever the thread count (conv1d's choice varies)
    const int64_t batch = x.size(0), out = conv.weight.size(0);
    return torch::baddbmm(conv.bias.view({1, out, 1}).expand({batch, out, x.size(2)}),
                          conv.weight.squeeze(2).expand({batch, out, x.size(1)}), x);
  }
  const int64_t fft_size = conv.stride == 1 && out_frames >= 1
                               ? spectral_conv1d_fft_size(taps, span, conv.weight.size(1), conv.weight.size(0))
                               : 0;
  if (fft_size == 0) return torch::conv1d(x, conv.weight, conv.bias, conv.stride, padding, dilation);
  std::shared_ptr<const SpectralConv1dPlan> plan;
  {
    std::lock_guard<std::mutex> lock(fold_mutex_);
    auto& slot = conv.plans[fft_size];
    if (!slot) slot = std::make_shared<const SpectralConv1dPlan>(
                   plan_spectral_conv1d(conv.weight, dilation, padding, fft_size, {}, conv.bias));
    plan = slot;
  }
  return spectral_conv1d(x, *plan);
}

CtcOutput ConvCtcModelImpl::infer(const torch::Tensor& features, const torch::Tensor& lengths) {
  const auto model = folded_model();
  torch::Tensor lens = lengths.to(features.device(), torch::kLong);
  std::vector<torch::Tensor> outputs;  // the prologue's and each block's output, for dense residuals
  torch::Tensor x = features.transpose(1, 2).contiguous();  // [B, F, T]
  for (size_t b = 0; b < blocks_.size(); ++b) {
    FoldedBlock& block = model->blocks[b];
    const torch::Tensor block_lengths = lens;
    torch::Tensor out = x;
    for (size_t l = 0; l < block.layers.size(); ++l) {
      FoldedConv& conv = block.layers[l];
      out = apply_folded(conv, mask(out, lens));
      lens = conv_output_lengths(lens, conv.weight.size(2), conv.stride, conv.dilation);
      if (l + 1 < block.layers.size()) activate_in_place(out);
    }
    for (size_t r = 0; r < block.residuals.size(); ++r) {
      const auto& input = block.residual_inputs[r] == SIZE_MAX ? x : outputs[block.residual_inputs[r]];
      const auto& weight = block.residuals[r];
      out.baddbmm_(weight.expand({out.size(0), weight.size(0), weight.size(1)}), mask(input, block_lengths));
    }
    activate_in_place(out);
    if (b + 2 < blocks_.size()) outputs.push_back(out);
    x = out;
  }
  auto logits = decoder_->forward(x).transpose(1, 2);  // [B, T', V]
  return {logits, lens};
}

void ConvCtcModelImpl::activate_in_place(torch::Tensor& x) const {
  if (config_.activation == "clipped_relu") x.clamp_(0.0, 20.0);
  else x.relu_();
}

torch::Tensor ConvCtcModelImpl::activate(torch::Tensor x, double dropout) const {
  // Dropout's masks from hashes (nn/hashed_dropout.h): at::dropout's bernoulli_ draws them on one
  // thread, 26 ms of a 470 ms Jasper bench step on one core.
  if (config_.activation != "clipped_relu") return hashed_relu_dropout(x, dropout, is_training());
  return hashed_dropout(clipped_relu(x, 20.0), dropout, is_training());
}

CtcOutput ConvCtcModelImpl::forward(const torch::Tensor& features, const torch::Tensor& lengths) {
  MIXSEQ_CHECK(features.dim() == 3 && features.size(2) == config_.in_feats, "conv_ctc: features must be [B, T, ",
               config_.in_feats, "], not ", features.sizes());
  if (runs_inference(features)) return infer(features, lengths);
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
