#include "mixseq/nn/glu_convolution.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/nn/cpu_float_linear.h"
#include "mixseq/nn/vectorized_tanh.h"
#include "mixseq/util/error.h"
#include "util/vector_clones.h"

namespace mixseq {
namespace {

// The output frames [begin, end) that tap k of a width-K convolution over T input frames, padded
// by `left` zero frames before them, takes from real input frames: frame t reads input frame
// t + k - left.
struct ConvolutionTapRange {
  int64_t begin = 0, end = 0;
  int64_t length() const { return end - begin; }
};

ConvolutionTapRange convolution_tap_range(int64_t k, int64_t left, int64_t input_length, int64_t output_length) {
  return {std::max<int64_t>(0, left - k), std::min<int64_t>(output_length, input_length + left - k)};
}

// rows [first, first + count) of a [T, B, C] tensor as a [count B, C] matrix (contiguous).
torch::Tensor time_frame_rows(const torch::Tensor& t, int64_t first, int64_t count) {
  return t.narrow(0, first, count).view({count * t.size(1), t.size(2)});
}

// The GLU of one row [a; b] (2 O floats): b <- σ(b) = (1 + tanh(b / 2)) / 2 (kept for backward),
// out <- a σ(b).
MIXSEQ_VECTOR_CLONES
void glu_gate_row(float* __restrict row, float* __restrict out, int64_t O) {
  float* gate = row + O;
  for (int64_t j = 0; j < O; ++j) gate[j] *= 0.5f;
  vectorized_tanh_in_place(gate, O);
  for (int64_t j = 0; j < O; ++j) {
    gate[j] = 0.5f + 0.5f * gate[j];
    out[j] = row[j] * gate[j];
  }
}

// Its gradient: from the row [a; σ(b)] and dout [O], d [a; b] = [dout σ(b); dout a σ(b) (1 - σ(b))].
MIXSEQ_VECTOR_CLONES
void glu_gate_gradient_row(const float* __restrict row, const float* __restrict grad, float* __restrict into,
                           int64_t O) {
  const float* gate = row + O;
  for (int64_t j = 0; j < O; ++j) {
    into[j] = grad[j] * gate[j];
    into[O + j] = grad[j] * row[j] * gate[j] * (1.0f - gate[j]);
  }
}

// Rows of 2 O per parallel task: about 16K floats each.
int64_t glu_gate_grain(int64_t O) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(O, 1)); }

// GLU([A; B]) = A σ(B) along the fp32 CPU convolution's output, and its gradient, with the gate
// kept in B's place (at::glu keeps B and computes σ again in backward).
torch::Tensor glu_gate(torch::Tensor& y) {  // [T', B, 2O] -> [T', B, O]; y's second half becomes σ(B)
  const int64_t O = y.size(2) / 2, rows = y.size(0) * y.size(1);
  auto out = at::empty({y.size(0), y.size(1), O}, y.options());
  float* y_data = y.data_ptr<float>();
  float* out_data = out.data_ptr<float>();
  at::parallel_for(0, rows, glu_gate_grain(O), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) glu_gate_row(y_data + r * 2 * O, out_data + r * O, O);
  });
  return out;
}

torch::Tensor glu_gate_gradient(const torch::Tensor& gated, const torch::Tensor& grad) {  // -> [T', B, 2O]
  const int64_t O = grad.size(2), rows = grad.size(0) * grad.size(1);
  auto into = at::empty_like(gated);
  const float* gated_data = gated.data_ptr<float>();
  const float* grad_data = grad.data_ptr<float>();
  float* into_data = into.data_ptr<float>();
  at::parallel_for(0, rows, glu_gate_grain(O), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      glu_gate_gradient_row(gated_data + r * 2 * O, grad_data + r * O, into_data + r * 2 * O, O);
  });
  return into;
}

// The fp32 convolution over time of [T, B, I] by W [K, I, 2O] and bias [2O], `left` and `right`
// zero frames around the input, then the GLU, without forming the padded input or the windows:
// tap k is one product of a run of input frames into a run of output frames, accumulated through
// oneDNN's sgemm (the layout is time-major, so each run is one contiguous matrix), then one pass
// for the gate. Backward takes the same runs: the gate's gradient in one pass, dx by accumulated
// dy W_kᵀ, dW_k = x_kᵀ dy, db the rows' sum. The products are those of the windows' one product
// split by tap, so the FLOPs are the same; what goes is the padded copy, the windows' copy (K times
// the input), their gradients' copies and sums, and the gate's second σ.
class GatedTimeConvolution : public torch::autograd::Function<GatedTimeConvolution> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias, int64_t left, int64_t right) {
    const int64_t length = x.size(0), batch = x.size(1), kernel = weight.size(0), outputs = weight.size(2);
    const int64_t out_length = length + left + right - kernel + 1;
    auto y = at::empty({out_length, batch, outputs}, x.options());
    y.copy_(bias.view({1, 1, outputs}).expand_as(y));
    for (int64_t k = 0; k < kernel; ++k) {
      const auto run = convolution_tap_range(k, left, length, out_length);
      if (run.length() <= 0) continue;
      auto into = time_frame_rows(y, run.begin, run.length());
      float_matmul_into(time_frame_rows(x, run.begin + k - left, run.length()), weight.select(0, k), into,
                        /*accumulate=*/true);
    }
    auto out = glu_gate(y);
    context->save_for_backward({x, weight, y});
    context->saved_data["left"] = left;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &x = saved[0], &weight = saved[1], &gated = saved[2];
    const int64_t left = context->saved_data["left"].toInt();
    const auto grad = glu_gate_gradient(gated, gradients[0].contiguous());  // [T', B, 2O]
    const int64_t length = x.size(0), kernel = weight.size(0), out_length = grad.size(0);
    torch::Tensor grad_x, grad_weight, grad_bias;
    if (context->needs_input_grad(0)) grad_x = at::zeros_like(x);
    if (context->needs_input_grad(1)) grad_weight = at::zeros_like(weight);
    for (int64_t k = 0; k < kernel; ++k) {
      const auto run = convolution_tap_range(k, left, length, out_length);
      if (run.length() <= 0) continue;
      const auto grad_rows = time_frame_rows(grad, run.begin, run.length());
      if (grad_x.defined()) {
        auto into = time_frame_rows(grad_x, run.begin + k - left, run.length());
        float_matmul_into(grad_rows, weight.select(0, k).t(), into, /*accumulate=*/true);
      }
      if (grad_weight.defined()) {
        auto into = grad_weight.select(0, k);
        float_matmul_into(time_frame_rows(x, run.begin + k - left, run.length()).t(), grad_rows, into,
                          /*accumulate=*/false);
      }
    }
    if (context->needs_input_grad(2)) grad_bias = grad.view({-1, grad.size(2)}).sum(0);
    return {grad_x, grad_weight, grad_bias, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

GluConvolutionImpl::GluConvolutionImpl(const GluConvolutionOptions& options)
    : in_channels_(options.in_channels), kernel_width_(options.kernel_width) {
  MIXSEQ_CHECK(options.in_channels > 0 && options.out_channels > 0 && options.kernel_width > 0,
               "GluConvolution: in_channels (", options.in_channels, "), out_channels (", options.out_channels,
               ") and kernel_width (", options.kernel_width, ") must be positive");
  MIXSEQ_CHECK(options.dropout >= 0.0 && options.dropout < 1.0, "GluConvolution: dropout must be in [0, 1), got ",
               options.dropout);
  const double std = std::sqrt(4.0 * (1.0 - options.dropout) /
                               static_cast<double>(options.kernel_width * options.in_channels));
  auto v = at::empty({options.kernel_width, options.in_channels, 2 * options.out_channels}).normal_(0.0, std);
  auto g = at::norm_except_dim(v, 2, 2);  // [1, 1, 2O]
  weight_g = register_parameter("weight_g", g);
  weight_v = register_parameter("weight_v", v);
  bias = register_parameter("bias", at::zeros({2 * options.out_channels}));
  const int64_t window = options.kernel_width * options.in_channels;
  product_ = register_module("product", QuantizableLinear(
                                            [v = weight_v, g = weight_g, window] {
                                              return at::_weight_norm(v, g, 2).reshape({window, -1}).t();  // [2O, K I]
                                            },
                                            bias));
}

torch::Tensor GluConvolutionImpl::weight() const { return at::_weight_norm(weight_v, weight_g, 2); }

torch::Tensor GluConvolutionImpl::forward(const torch::Tensor& x, int64_t padding) {
  return forward_padded(x, padding, padding);
}

torch::Tensor GluConvolutionImpl::forward_padded(const torch::Tensor& x, int64_t left, int64_t right) {
  MIXSEQ_CHECK(x.dim() == 3 && x.size(2) == in_channels_, "GluConvolution: input must be [T, B, ", in_channels_,
               "], got ", x.sizes());
  MIXSEQ_CHECK(left >= 0 && right >= 0, "GluConvolution: padding must be >= 0, got ", left, " and ", right);
  MIXSEQ_CHECK(x.size(0) + left + right >= kernel_width_, "GluConvolution: ", x.size(0) + left + right,
               " padded time steps are fewer than the kernel (", kernel_width_, ")");
  const bool quantized = product_->quantized_or_observed();
  const auto w = quantized ? torch::Tensor() : weight().to(x.scalar_type());  // [K, I, 2O]
  const auto b = quantized ? torch::Tensor() : bias.to(x.scalar_type());
  if (!quantized && takes_cpu_float_linear(x, w.view({-1, w.size(2)}), b))
    return GatedTimeConvolution::apply(x.contiguous(), w, b, left, right);  // [T', B, O]
  // [T + left + right, B, I]
  const auto input = left > 0 || right > 0 ? at::constant_pad_nd(x, {0, 0, 0, 0, left, right}) : x;
  const int64_t out_length = input.size(0) - kernel_width_ + 1, batch = input.size(1);
  // Elsewhere (quantized or observed, bf16, ATen's products): one product over the K time-shifted
  // slices side by side, [T' B, K I] x [K I, 2O], rather than conv_tbc's K products accumulated
  // into the output (a decoding step's window is one product of B rows).
  std::vector<torch::Tensor> shifted;
  for (int64_t k = 0; k < kernel_width_; ++k) shifted.push_back(input.narrow(0, k, out_length));
  const auto windows = kernel_width_ == 1 ? input : at::cat(shifted, 2);                 // [T', B, K I]
  const auto rows = windows.reshape({out_length * batch, -1});                           // [T' B, K I]
  const auto y = quantized ? product_(rows)
                           : float_linear_or_aten(rows, w.reshape({kernel_width_ * in_channels_, -1}).t(), b);
  // y: [T' B, 2O]
  return at::glu(y.view({out_length, batch, -1}), 2);                                    // [T', B, O]
}

}  // namespace mixseq
