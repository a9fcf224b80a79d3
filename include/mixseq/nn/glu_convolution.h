// GluConvolution: one convolutional block of ConvS2S (Gehring et al. 2017, §3.2) without its
// residual: a 1-D convolution over time from I to 2O channels with weight normalisation, then a
// gated linear unit (Dauphin et al. 2017), GLU([A; B]) = A * sigmoid(B), down to O channels.
//
// Layout is time-major, [T, B, C], as fairseq's ConvTBC, whose time-shifted slices are contiguous.
// In fp32 on the CPU (where nn/cpu_float_linear.h takes products) the convolution and the GLU are
// one autograd node: K products accumulated into the output, one per tap, each of a run of real
// input frames (as conv_tbc; the padding is never formed), then one pass for the gate, which is
// kept for backward (at::glu computes σ again there); backward likewise. At the ConvS2S bench
// shape, one thread, a 2-core Zen 4, the training step took 252 ms against 266 with the windows'
// copy below and at::glu (docs/benchmarks.md).
// Elsewhere (bf16, quantized, ATen's products) it is one matrix product of the K slices side by
// side with the weight viewed as [K I, 2O]; same result. The parameters are
// kept as torch.nn.utils.weight_norm(conv, dim=2) keeps fairseq's ConvTBC weight:
// "weight_v" [K, I, 2O], "weight_g" [1, 1, 2O] (one norm per output channel over K x I), and
// "bias" [2O]. Init as fairseq's ConvTBC() helper: V ~ N(0, sqrt(4 (1 - dropout) / (K I)))
// (the 4 makes up for the GLU halving the variance twice), b = 0, g = ||V||.
//
// forward() pads `padding` zero frames at both ends; a caller that needs other padding (the
// decoder's causal convolution, the encoder's even kernels) pads the input itself. Under
// autocast the weights are cast to the input's dtype.
//
// Post-training quantization (quant/) sees that product as a linear layer over the windows: the
// child "product", a QuantizableLinear view (nn/quantizable_linear.h) of the derived weight as
// [2O, K I] and the bias, K I inputs per output frame (plan names such as
// "decoder_layers.0.conv.product"). While it is observed or quantized, forward() runs the windows
// through it. It registers no parameters: checkpoints are unchanged.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <cstdint>

#include "mixseq/nn/quantizable_linear.h"

namespace mixseq {

struct GluConvolutionOptions {
  int64_t in_channels = 0;   // I
  int64_t out_channels = 0;  // O, after the GLU (the convolution itself has 2 O)
  int64_t kernel_width = 3;  // K, in time steps
  double dropout = 0.0;      // the dropout on this layer's input, for the initial spread only; 0 = none
};

class GluConvolutionImpl : public torch::nn::Module {
 public:
  explicit GluConvolutionImpl(const GluConvolutionOptions& options);

  // x [T, B, I] -> [T + 2 padding - K + 1, B, O]
  torch::Tensor forward(const torch::Tensor& x, int64_t padding = 0);
  // The same with `left` zero frames before x and `right` after it: [T + left + right - K + 1, B, O]
  // (the decoder's causal convolution: left K - 1, right 0; the encoder's even kernels).
  torch::Tensor forward_padded(const torch::Tensor& x, int64_t left, int64_t right);
  torch::Tensor weight() const;  // g * V / ||V||, [K, I, 2O]
  int64_t kernel_width() const { return kernel_width_; }
  int64_t in_channels() const { return in_channels_; }

  torch::Tensor weight_g;  // [1, 1, 2O]
  torch::Tensor weight_v;  // [K, I, 2O]
  torch::Tensor bias;      // [2O]

 private:
  int64_t in_channels_;
  int64_t kernel_width_;
  QuantizableLinear product_{nullptr};  // the quantizable view: weight() as [2O, K I], and bias
};
TORCH_MODULE(GluConvolution);

}  // namespace mixseq
