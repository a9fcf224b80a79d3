// Wave2Letter+ and Jasper: 1-D convolutional acoustic models over feature frames, as
// DeepLearningExamples' PyTorch Jasper (jasper/model.py) builds them and OpenSeq2Seq's
// Wave2Letter+ (w2lplus_large_8gpus_mp) is laid out:
//
//   prologue:  conv(k, stride 2) -> batch norm -> activation -> dropout
//   blocks:    `repeat` sub-blocks of conv -> batch norm [-> activation -> dropout], the last one's
//              activation after the residual sum: none (Wave2Letter+), the block's input through a
//              1x1 conv + batch norm ("block"), or every earlier block's output and the prologue's,
//              each through its own 1x1 conv + batch norm ("dense", Jasper's dense residual)
//   epilogue:  conv(k, dilation d) -> bn -> act -> dropout, conv(1) -> bn -> act -> dropout
//   decoder:   conv(1) with bias to V symbols
// Convolutions have no bias and "same" padding; batch norm eps 1e-3, momentum 0.1; weights start
// Xavier-uniform. With conv_masks each convolution first zeroes its input past the utterance's
// length (Jasper's MaskedConv1d), so padding never leaks into real frames.
//
// Inference (eval mode, no autograd, fp32 on the CPU, autocast off) folds each batch norm into its
// convolution, merges a 1x1 residual that reads a layer's own input into that layer's centre tap,
// and computes the convolutions with FFTs (nn/spectral_conv1d.h) where an estimate says that costs
// less: the same outputs up to float rounding (about 1e-6 relative), 3-4x fewer multiply-adds for
// Jasper's kernels of 11 to 29 taps. The folded weights are remade when any of the layer's
// parameters or statistics changes (their version counters), e.g. between validations in training.
// Concurrent inference forwards are safe; a forward beside training's updates is not (as ever).
#pragma once

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mixseq/models/speech_recognizer.h"
#include "mixseq/nn/spectral_conv1d.h"
#include "mixseq/util/config.h"

namespace mixseq {

struct ConvCtcConfig {
  int64_t in_feats = 64;                  // F: feature bins (the speech task sets it from its features)
  std::string activation = "relu";        // relu, or clipped_relu: min(max(x, 0), 20) as Wave2Letter+
  std::string residual = "dense";         // none (Wave2Letter+), block, or dense (Jasper 10x5 "dr")
  int64_t prologue_channels = 256;
  int64_t prologue_kernel = 11;
  int64_t prologue_stride = 2;            // the time reduction: T' = ceil(T / stride)
  std::vector<int64_t> channels = {256, 256, 384, 384, 512, 512, 640, 640, 768, 768};  // one per block
  std::vector<int64_t> kernels = {11, 11, 13, 13, 17, 17, 21, 21, 25, 25};           // one per block
  std::vector<double> dropouts = {0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.3, 0.3};   // one per block
  int64_t repeat = 5;                     // sub-blocks per block
  int64_t epilogue_channels = 896;
  int64_t epilogue_kernel = 29;
  int64_t epilogue_dilation = 2;
  int64_t enc_feats = 1024;               // width of the last 1x1 layer, the decoder's input
  double prologue_dropout = 0.2;
  double epilogue_dropout = 0.4;          // both epilogue layers
  bool conv_masks = true;                 // zero each convolution's input past the utterance's length

  void visit(ConfigVisitor& v) {
    v.field("in_feats", in_feats, "feature bins (set from the speech task's features)");
    v.choice("activation", activation, {"relu", "clipped_relu"}, "activation: relu or min(relu, 20)");
    v.choice("residual", residual, {"none", "block", "dense"},
             "residual connections: none (Wave2Letter+), each block's input, or dense (Jasper)");
    v.field("prologue_channels", prologue_channels, "channels of the first convolution");
    v.field("prologue_kernel", prologue_kernel, "kernel width of the first convolution");
    v.field("prologue_stride", prologue_stride, "stride of the first convolution (time reduction)");
    v.field("channels", channels, "channels of each block");
    v.field("kernels", kernels, "kernel width of each block");
    v.field("dropouts", dropouts, "dropout of each block; 0 disables");
    v.field("repeat", repeat, "sub-blocks (convolutions) per block");
    v.field("epilogue_channels", epilogue_channels, "channels of the dilated epilogue convolution");
    v.field("epilogue_kernel", epilogue_kernel, "kernel width of the dilated epilogue convolution");
    v.field("epilogue_dilation", epilogue_dilation, "dilation of the epilogue convolution");
    v.field("enc_feats", enc_feats, "channels of the last 1x1 convolution");
    v.field("prologue_dropout", prologue_dropout, "dropout after the first convolution; 0 disables");
    v.field("epilogue_dropout", epilogue_dropout, "dropout after the epilogue convolutions; 0 disables");
    v.field("conv_masks", conv_masks, "zero the frames past each utterance's length before every convolution");
  }

  // OpenSeq2Seq's w2lplus_large_8gpus_mp: 15 + 2 layers, no residuals, clipped ReLU.
  static ConvCtcConfig wave2letter_plus_large();
  // DeepLearningExamples' jasper10x5dr (the defaults above).
  static ConvCtcConfig jasper_10x5();
};

class ConvCtcModelImpl : public SpeechRecognizerImpl {
 public:
  ConvCtcModelImpl(const ConvCtcConfig& config, int64_t vocab_size);

  CtcOutput forward(const torch::Tensor& features, const torch::Tensor& lengths) override;
  int64_t feature_bins() const override { return config_.in_feats; }
  int64_t output_frames(int64_t frames) const override;

 private:
  struct FoldedConv {  // a convolution and its batch norm as one convolution with a bias, for inference
    torch::Tensor weight, bias;  // [Co, Ci, K], [Co]
    int64_t stride = 1, dilation = 1;
    std::map<int64_t, std::shared_ptr<const SpectralConv1dPlan>> plans;  // by FFT size, made under fold_mutex_
  };
  struct FoldedBlock {
    std::vector<FoldedConv> layers;
    std::vector<torch::Tensor> residuals;  // [Co, Ci] 1x1 weights not merged into a layer (their shifts are in
    std::vector<size_t> residual_inputs;   // layers.back().bias), and the output each reads (SIZE_MAX: the block's input)
  };
  struct FoldedModel {
    std::vector<int64_t> versions;  // of every parameter and buffer when it was made
    std::vector<FoldedBlock> blocks;
  };
  struct Layer {  // one convolution with its batch norm
    torch::nn::Conv1d conv{nullptr};
    torch::nn::BatchNorm1d norm{nullptr};
  };
  struct Block {
    std::vector<Layer> layers;     // the sub-blocks
    std::vector<Layer> residuals;  // 1x1 convolutions of the residual inputs (none, 1, or one per earlier output)
    double dropout = 0;
  };
  Layer make_layer(const std::string& name, int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation);
  torch::Tensor mask(const torch::Tensor& x, const torch::Tensor& lengths) const;
  torch::Tensor apply_layer(const Layer& layer, const torch::Tensor& x, const torch::Tensor& lengths);
  torch::Tensor activate(torch::Tensor x, double dropout) const;
  void activate_in_place(torch::Tensor& x) const;  // the activation of inference (no dropout)
  // The inference path (see the header comment): the model folded, remade when a version changed.
  CtcOutput infer(const torch::Tensor& features, const torch::Tensor& lengths);
  std::shared_ptr<FoldedModel> folded_model();
  FoldedConv fold(const Layer& layer, const Layer* merged) const;
  torch::Tensor apply_folded(FoldedConv& conv, const torch::Tensor& x);

  ConvCtcConfig config_;
  std::vector<Block> blocks_;  // prologue, blocks, the two epilogue layers
  torch::nn::Conv1d decoder_{nullptr};
  std::shared_ptr<FoldedModel> folded_;  // made by the first inference forward
  std::mutex fold_mutex_;  // guards folded_ and its plans: inference forwards may run on several threads at once
};

}  // namespace mixseq
