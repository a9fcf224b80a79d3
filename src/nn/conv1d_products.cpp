#include "mixseq/nn/conv1d_products.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cstring>

#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/nn/bf16_rows.h"
#include "mixseq/util/error.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

bool bf16_autocast_on_cpu() {
  return compat::is_autocast_enabled(c10::DeviceType::CPU) &&
         compat::autocast_dtype(c10::DeviceType::CPU) == at::kBFloat16;
}

// The copies below are row copies in parallel: LibTorch's copy_ of the strided views took 1.5 ns an
// element here (139 ms of a 486 ms Jasper step on one thread), a memcpy of each row a tenth of that.

// x [B, C, T] -> cols [C K, B T'] in `dtype`: row (c, k) holds, for each utterance b, the T'
// frames x[b, c, k d - left + t] (zero outside the utterance), i.e. tap k's view of x padded with
// `left` zeros before it (and as many after as T' needs).
at::Tensor columns(const at::Tensor& x, int64_t left, int64_t taps, int64_t dilation, int64_t frames_out,
                   at::ScalarType dtype) {
  const auto source = x.to(dtype).contiguous();
  const int64_t batch = x.size(0), channels = x.size(1), frames = x.size(2);
  auto out = at::empty({channels * taps, batch * frames_out}, source.options());
  const auto bytes = static_cast<int64_t>(source.element_size());
  const auto* in = static_cast<const char*>(source.data_ptr());
  auto* rows = static_cast<char*>(out.data_ptr());
  at::parallel_for(0, channels * taps, 8, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {  // row = c K + k
      const int64_t c = row / taps, start = row % taps * dilation - left;  // x's frame for t = 0
      const int64_t zeros_before = std::clamp<int64_t>(-start, 0, frames_out);
      const int64_t copied = std::clamp<int64_t>(frames - std::max<int64_t>(start, 0), 0, frames_out - zeros_before);
      for (int64_t b = 0; b < batch; ++b) {
        char* to = rows + (row * batch + b) * frames_out * bytes;
        std::memset(to, 0, zeros_before * bytes);
        if (copied > 0)
          std::memcpy(to + zeros_before * bytes, in + ((b * channels + c) * frames + start + zeros_before) * bytes,
                      copied * bytes);
        std::memset(to + (zeros_before + copied) * bytes, 0, (frames_out - zeros_before - copied) * bytes);
      }
    }
  });
  return out;
}

// product [C, B T] (contiguous; fp32 for bf16 products) -> [B, C, T] in `dtype`, in one pass.
at::Tensor batch_first(const at::Tensor& product, int64_t batch, at::ScalarType dtype) {
  const int64_t channels = product.size(0), frames = product.size(1) / batch;
  auto out = at::empty({batch, channels, frames}, product.options().dtype(dtype));
  if (product.scalar_type() != at::kFloat || dtype != at::kBFloat16) {
    out.copy_(product.view({channels, batch, frames}).transpose(0, 1));
    return out;
  }
  const float* in = product.data_ptr<float>();
  auto* rows = out.data_ptr<at::BFloat16>();
  at::parallel_for(0, batch * channels, 16, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {  // row = b C + c
      const int64_t b = row / channels, c = row % channels;
      narrow_row(in + (c * batch + b) * frames, frames, rows + row * frames);
    }
  });
  return out;
}

class Conv1dProducts : public torch::autograd::Function<Conv1dProducts> {
 public:
  // (The bias comes as an optional: autograd's apply cannot take an undefined tensor.)
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& weight, const c10::optional<torch::Tensor>& bias, int64_t padding,
                               int64_t dilation, int64_t compute_dtype) {
    const auto compute = static_cast<at::ScalarType>(compute_dtype);
    const int64_t taps = weight.size(2), frames_out = x.size(2) + 2 * padding - (taps - 1) * dilation;
    const auto kernel = weight.to(compute).contiguous();  // [Co, Ci, K]
    const auto input = x.to(compute).contiguous();  // kept for backward's columns
    const auto cols = columns(input, padding, taps, dilation, frames_out, compute);
    auto product = widening_matmul(kernel.view({kernel.size(0), -1}), cols);  // [Co, B T'], fp32 for bf16
    if (bias) product.add_(bias->to(product.scalar_type()).unsqueeze(1));
    context->save_for_backward({input, kernel});
    context->saved_data["padding"] = padding;
    context->saved_data["dilation"] = dilation;
    context->saved_data["x_dtype"] = static_cast<int64_t>(x.scalar_type());
    context->saved_data["weight_dtype"] = static_cast<int64_t>(weight.scalar_type());
    if (bias) context->saved_data["bias_dtype"] = static_cast<int64_t>(bias->scalar_type());
    return batch_first(product, x.size(0), compute);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &input = saved[0], &kernel = saved[1];  // [B, Ci, T], [Co, Ci, K], both in the compute dtype
    const int64_t padding = context->saved_data["padding"].toInt();
    const int64_t dilation = context->saved_data["dilation"].toInt();
    const auto dtype = [&](const char* key) { return static_cast<at::ScalarType>(context->saved_data[key].toInt()); };
    const int64_t batch = input.size(0), in_channels = input.size(1), frames = input.size(2);
    const int64_t out_channels = kernel.size(0), taps = kernel.size(2);
    const auto grad = gradients[0].to(input.scalar_type());  // [B, Co, T']
    const int64_t frames_out = grad.size(2);
    torch::Tensor grad_x, grad_weight, grad_bias;
    if (context->needs_input_grad(0)) {
      // dx[b, i, s] = sum_{o, k'} W[o, i, K - 1 - k'] g[b, o, s + k' d - (span - 1 - padding)]
      const int64_t side = (taps - 1) * dilation - padding;
      const auto flipped = kernel.flip(2).transpose(0, 1).contiguous().view({in_channels, out_channels * taps});
      const auto cols = columns(grad, side, taps, dilation, frames, grad.scalar_type());
      grad_x = batch_first(widening_matmul(flipped, cols), batch, dtype("x_dtype"));
    }
    if (context->needs_input_grad(1)) {
      const auto cols = columns(input, padding, taps, dilation, frames_out, input.scalar_type());
      const auto rows = columns(grad, 0, 1, 1, frames_out, grad.scalar_type());  // [Co, B T']
      grad_weight = widening_matmul(rows, cols.t()).view(kernel.sizes()).to(dtype("weight_dtype"));
    }
    const bool has_bias = context->saved_data.count("bias_dtype");
    if (has_bias && context->needs_input_grad(2)) {
      const auto wide = grad.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
      grad_bias = grad.sum(at::IntArrayRef{0, 2}, /*keepdim=*/false, wide).to(dtype("bias_dtype"));
    }
    return {grad_x, grad_weight, grad_bias, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor conv1d_products(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                              int64_t padding, int64_t dilation) {
  MIXSEQ_CHECK(x.dim() == 3 && weight.dim() == 3 && x.size(1) == weight.size(1) && x.is_cpu(),
               "conv1d_products: x [B, Ci, T] and weight [Co, Ci, K] on the CPU, not ", x.sizes(), " and ",
               weight.sizes());
  const int64_t span = (weight.size(2) - 1) * dilation + 1;
  MIXSEQ_CHECK(dilation >= 1 && padding >= 0 && padding <= span - 1 && x.size(2) + 2 * padding - span + 1 >= 1,
               "conv1d_products: padding ", padding, " and dilation ", dilation, " do not fit ", weight.size(2),
               " taps over ", x.size(2), " frames");
  const auto compute = x.scalar_type() == at::kBFloat16 || bf16_autocast_on_cpu() ? at::kBFloat16 : x.scalar_type();
  const auto optional_bias = bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt;
  return Conv1dProducts::apply(x, weight, optional_bias, padding, dilation, static_cast<int64_t>(compute));
}

torch::Tensor conv1d_for_training(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                  int64_t stride, int64_t padding, int64_t dilation) {
  const bool bf16 = x.scalar_type() == at::kBFloat16 || bf16_autocast_on_cpu();
  const bool takes_products = x.is_cpu() && bf16 && at::GradMode::is_enabled() && stride == 1 && x.dim() == 3 &&
                              weight.dim() == 3 && weight.size(2) >= kConv1dProductsMinTaps &&
                              padding <= (weight.size(2) - 1) * dilation;
  if (takes_products) return conv1d_products(x, weight, bias, padding, dilation);
  return at::conv1d(x, weight, bias, stride, padding, dilation);
}

}  // namespace mixseq
