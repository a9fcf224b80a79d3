// QuantizableLinear: the linear layer y = x Wᵀ + b of every block that post-training
// quantization may touch (attention projections, feed-forward, classifiers). It is the one seam
// between the float model and its quantized forms: a quantized checkpoint loads into the same
// model, and quant/ switches each layer's precision after the float weights are in.
//
//   kFloat      at::linear, bit-identical to torch::nn::Linear: same parameter names (weight
//               [N, K], bias [N] or none), same initialization and random draws, same kernel
//   kSimulated  Distiller-style simulation: input, weight and output rounded to their grids and
//               back (nn/quantization_grid.h), the product itself in fp32
//   kInt8       real int8 on the CPU: quint8 input, qint8 weight (symmetric), int32 accumulation
//               and a quint8 output through LibTorch's quantized::linear (util/int8_engine.h),
//               dequantized to fp32; equal to kSimulated up to one output grid step
//
// The quantization state is not part of the module's parameters or buffers: a float
// checkpoint and a quantized one hold the same tensors, and the quantized one adds the grids'
// source (quant/quantization_plan.h). Calibration watches a layer through set_observer().
//
// Not thread-safe (like every module); kInt8 runs on the CPU only.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/options/linear.h>
#include <torch/nn/pimpl.h>

#include <functional>
#include <memory>
#include <tuple>
#include <vector>

#include "mixseq/nn/int8_activation.h"
#include "mixseq/nn/quantization_grid.h"

namespace mixseq {

enum class LinearPrecision { kFloat, kSimulated, kInt8 };

struct LinearQuantization {
  LinearPrecision precision = LinearPrecision::kFloat;
  QuantizationGrid weight;  // per tensor or per output channel; ignored by kFloat
  QuantizationGrid input;   // the activation entering the layer, per tensor
  QuantizationGrid output;  // the layer's result, per tensor
};

class QuantizableLinearImpl : public torch::nn::Module {
 public:
  // Initialized exactly as torch::nn::Linear(options) (Kaiming uniform, same random draws).
  explicit QuantizableLinearImpl(const torch::nn::LinearOptions& options);
  // A view of weights another module owns and registers (an LSTM's gate products,
  // nn/quantizable_lstm.h; a Transformer's output projection tied to its embedding): this module
  // registers no parameters.
  QuantizableLinearImpl(torch::Tensor shared_weight, torch::Tensor shared_bias);
  // A view of a weight another module derives from its own parameters (weight normalisation's
  // g V / ||V||, nn/weight_norm_linear.h and nn/glu_convolution.h): `derive` makes it. The float
  // forward derives it afresh at every call (gradients reach the owner's parameters);
  // refresh_weight() and set_quantization() store it in `weight` for the quantized precisions,
  // which round what was derived then. Registers no parameters.
  QuantizableLinearImpl(std::function<torch::Tensor()> derive, torch::Tensor shared_bias);

  torch::Tensor forward(const torch::Tensor& x);  // [..., K] -> [..., N]
  // relu(forward(x)): in float, unobserved, the ReLU fused with the product (nn/linear_product.h's
  // linear_relu_product); an observer still sees the product before the ReLU.
  torch::Tensor forward_relu(const torch::Tensor& x);

  // Whether forward runs the int8 product (and so forward_codes can).
  bool runs_int8() const { return quantization_.precision == LinearPrecision::kInt8; }
  // An int8 layer's result left on its output grid, as uint8 codes [..., N], for a consumer that
  // reads codes itself (a decoding step's attention keys and values, nn/key_value_cache.h): a
  // quarter of the bytes, and dequantize_codes gives forward's result bit for bit.
  std::tuple<torch::Tensor, CodeGrid> forward_codes(const torch::Tensor& x);

  // Switches to `quantization`'s precision; the quantized precisions round the weight now (kInt8
  // also checks for 8 bits and a symmetric weight grid, and packs it), so later weight changes
  // need another call. Throws mixseq::Error
  // naming what does not fit.
  void set_quantization(const LinearQuantization& quantization);
  // A derived view (above): `weight` <- the weight derived now, detached. Otherwise nothing.
  void refresh_weight();
  const LinearQuantization& quantization() const { return quantization_; }

  // Called after each forward with its float input [..., K] and output [..., N]; empty: none.
  using Observer = std::function<void(const torch::Tensor& input, const torch::Tensor& output)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }
  bool observed() const { return static_cast<bool>(observer_); }
  // Observed or not in float: an owner with a float path of its own (a weight-normalised layer)
  // must run through this layer.
  bool quantized_or_observed() const { return observed() || quantization_.precision != LinearPrecision::kFloat; }

  torch::Tensor weight;  // [N, K]
  torch::Tensor bias;    // [N], or undefined without bias

 private:
  struct Int8Weight;  // the prepacked weight (LibTorch's LinearPackedParamsBase)

  torch::Tensor int8_product(const torch::Tensor& x) const;        // x [..., K] -> quint8 [R, N]
  std::vector<int64_t> output_shape(const torch::Tensor& x) const;  // [..., N]

  LinearQuantization quantization_;
  std::function<torch::Tensor()> derive_;  // a derived view's weight; empty otherwise
  torch::Tensor simulated_weight_;  // kSimulated: the weight rounded to its grid once, [N, K]
  std::shared_ptr<Int8Weight> int8_weight_;
  Observer observer_;
};
TORCH_MODULE(QuantizableLinear);

}  // namespace mixseq
