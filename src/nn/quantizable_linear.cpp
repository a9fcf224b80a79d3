#include "mixseq/nn/quantizable_linear.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/quantized/PackedParams.h>
#include <torch/nn/modules/linear.h>

#include "mixseq/nn/int8_activation.h"
#include "mixseq/nn/linear_product.h"
#include "mixseq/util/error.h"
#include "mixseq/util/int8_engine.h"

namespace mixseq {

struct QuantizableLinearImpl::Int8Weight {
  c10::intrusive_ptr<LinearPackedParamsBase> packed;
  double input_scale, output_scale;  // the activation grids as quint8, read once here, not at every call
  int64_t input_zero_point, output_zero_point;
};

namespace {

using PackedWeight = c10::intrusive_ptr<LinearPackedParamsBase>;

// The quantized ops are registered with the dispatcher only (no at:: function in 1.13 or 2.x).
PackedWeight prepack(const at::Tensor& weight, const c10::optional<at::Tensor>& bias) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("quantized::linear_prepack", "")
                             .typed<PackedWeight(at::Tensor, c10::optional<at::Tensor>)>();
  return op.call(weight, bias);
}

at::Tensor quantized_linear(const at::Tensor& x, const PackedWeight& weight, double output_scale,
                            int64_t output_zero_point) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("quantized::linear", "")
                             .typed<at::Tensor(at::Tensor, const PackedWeight&, double, int64_t)>();
  return op.call(x, weight, output_scale, output_zero_point);
}

// A per-tensor activation grid as quint8: a symmetric grid's q in [-127, 127] moves up by 128.
std::tuple<double, int64_t> as_quint8(const QuantizationGrid& grid, const char* which) {
  MIXSEQ_CHECK(grid.defined() && !grid.per_channel() && grid.qmax - grid.qmin <= 255, "int8 linear: the ", which,
               " grid must be a per-tensor grid of 8 bits");
  const int64_t shift = grid.symmetric() ? 128 : 0;
  return {grid.scale.item<double>(), grid.zero_point.item<int64_t>() + shift};
}

}  // namespace

QuantizableLinearImpl::QuantizableLinearImpl(const torch::nn::LinearOptions& options) {
  // Built by LibTorch's own Linear, so the initialization and its random draws are the same.
  torch::nn::LinearImpl initialized(options);
  weight = register_parameter("weight", initialized.weight);
  bias = register_parameter("bias", initialized.bias, /*requires_grad=*/options.bias());
}

QuantizableLinearImpl::QuantizableLinearImpl(torch::Tensor shared_weight, torch::Tensor shared_bias)
    : weight(std::move(shared_weight)), bias(std::move(shared_bias)) {}

QuantizableLinearImpl::QuantizableLinearImpl(std::function<torch::Tensor()> derive, torch::Tensor shared_bias)
    : bias(std::move(shared_bias)), derive_(std::move(derive)) {
  refresh_weight();
}

void QuantizableLinearImpl::refresh_weight() {
  if (!derive_) return;
  torch::NoGradGuard no_grad;
  weight = derive_().detach();
}

void QuantizableLinearImpl::set_quantization(const LinearQuantization& quantization) {
  refresh_weight();
  int8_weight_.reset();
  simulated_weight_ = torch::Tensor();
  if (quantization.precision != LinearPrecision::kFloat) {
    MIXSEQ_CHECK(quantization.weight.defined() && quantization.input.defined() && quantization.output.defined(),
                 "quantized linear: weight, input and output grids are all needed");
    MIXSEQ_CHECK(!quantization.weight.per_channel() || quantization.weight.scale.size(0) == weight.size(0),
                 "quantized linear: ", quantization.weight.scale.size(0), " weight channels for ", weight.size(0),
                 " outputs");
  }
  if (quantization.precision == LinearPrecision::kSimulated) {
    torch::NoGradGuard no_grad;
    simulated_weight_ = quantize_dequantize(weight.to(at::kFloat), quantization.weight);
  }
  if (quantization.precision == LinearPrecision::kInt8) {
    use_int8_engine();
    const auto& grid = quantization.weight;
    MIXSEQ_CHECK(grid.symmetric() && grid.qmax <= 127, "int8 linear: the weight grid must be symmetric 8-bit ",
                 "(the int8 engines take no weight zero point); got q in [", grid.qmin, ", ", grid.qmax,
                 "]; set weight_symmetric: true and bits: 8, or use mode: simulated");
    const auto [input_scale, input_zero_point] = as_quint8(quantization.input, "input");
    const auto [output_scale, output_zero_point] = as_quint8(quantization.output, "output");
    const auto w = weight.detach().to(at::kCPU, at::kFloat).contiguous();
    const auto qweight = grid.per_channel()
                             ? at::quantize_per_channel(w, grid.scale.to(at::kDouble), grid.zero_point, 0, at::kQInt8)
                             : at::quantize_per_tensor(w, grid.scale.item<double>(), 0, at::kQInt8);
    const auto b = bias.defined() ? c10::optional<at::Tensor>(bias.detach().to(at::kCPU, at::kFloat).contiguous())
                                  : c10::nullopt;
    int8_weight_ = std::make_shared<Int8Weight>(
        Int8Weight{prepack(qweight, b), input_scale, output_scale, input_zero_point, output_zero_point});
  }
  quantization_ = quantization;
}

torch::Tensor QuantizableLinearImpl::forward(const torch::Tensor& x) {  // x: [..., K]
  torch::Tensor y;                                                      // [..., N]
  switch (quantization_.precision) {
    case LinearPrecision::kFloat:
      y = linear_product(x, derive_ ? derive_() : weight, bias);
      break;
    case LinearPrecision::kSimulated: {
      const auto qx = quantize_dequantize(x.to(at::kFloat), quantization_.input);
      const auto b = bias.defined() ? bias.to(at::kFloat) : bias;
      y = quantize_dequantize(at::linear(qx, simulated_weight_, b), quantization_.output);
      break;
    }
    case LinearPrecision::kInt8:
      y = dequantize_activation(int8_product(x)).view(output_shape(x));  // [..., N]
      break;
  }
  if (observer_) observer_(x, y);
  return y;
}

torch::Tensor QuantizableLinearImpl::forward_relu(const torch::Tensor& x) {
  if (quantization_.precision == LinearPrecision::kFloat && !observer_) {
    return linear_relu_product(x, derive_ ? derive_() : weight, bias);
  }
  return at::relu(forward(x));
}

std::tuple<torch::Tensor, CodeGrid> QuantizableLinearImpl::forward_codes(const torch::Tensor& x) {
  MIXSEQ_CHECK(runs_int8() && !observer_, "forward_codes: the layer must run in int8, unobserved");
  auto [codes, grid] = activation_codes(int8_product(x));
  return {codes.view(output_shape(x)), grid};
}

at::Tensor QuantizableLinearImpl::int8_product(const torch::Tensor& x) const {  // x [..., K] -> quint8 [R, N]
  MIXSEQ_CHECK(x.device().is_cpu(), "int8 linear runs on the CPU only; got input on ", x.device());
  const auto& w = *int8_weight_;
  const auto rows = x.to(at::kFloat).reshape({-1, x.size(-1)});                  // [R, K]
  const auto qx = quantize_activation(rows, w.input_scale, w.input_zero_point);  // [R, K]
  return quantized_linear(qx, w.packed, w.output_scale, w.output_zero_point);    // [R, N]
}

std::vector<int64_t> QuantizableLinearImpl::output_shape(const torch::Tensor& x) const {
  auto shape = x.sizes().vec();
  shape.back() = weight.size(0);
  return shape;
}

}  // namespace mixseq
