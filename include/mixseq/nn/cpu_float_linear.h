// A linear layer's fp32 products on the CPU, forward and backward, through oneDNN's sgemm
// (nn/bf16_matmul.h's float_matmul_into) in place of at::linear, whose products go to OpenBLAS.
//
// Why: at the Transformer bench's shapes (992 positions, d_model 256, ffn 1024, vocabulary 2000)
// oneDNN's sgemm ran every product of a training step 1.15-1.5x faster than OpenBLAS 0.3.21 on
// its Cooperlake kernels, on a 2-core Zen 4 at 2 threads ([992, 256] x [256, 256]: 0.60-0.63 ms
// against 0.93-0.96; the output layer's gradient products 4.6 ms against 6.6-6.9; only
// [256, 992] x [992, 1024] was slower, 3.6 ms against 3.2; docs/benchmarks.md). Both run on the
// calling thread's OpenMP count (util/threads.h).
//
// The same sums in another order: outputs and gradients match at::linear's to fp32 rounding, not
// bit for bit. Where oneDNN's sgemm is not called directly (PyTorch 2.x hides it; or
// ATEN_CPU_CAPABILITY=default holds ATen to its baseline kernels for bit-exact golden runs)
// nothing comes here.
#pragma once

#include <torch/types.h>

#include <mutex>

#include "mixseq/util/tensor_identity.h"

namespace mixseq {

// Whether x's product with `weight` (and `bias`, if defined) should come here: all fp32 on the
// CPU, no autocast on, and oneDNN's sgemm called directly in this process.
bool takes_cpu_float_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// x [..., K], weight [N, K], bias [N] or undefined -> fp32 [..., N], x Wᵀ + b. Differentiable in
// each of them (first order).
torch::Tensor cpu_float_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// relu(x Wᵀ + b), as cpu_float_linear then at::relu compute it, in fewer passes over [..., N]: the
// bias and the ReLU in one pass over the product, and backward masks the gradient by the saved
// output (no copy of it kept) where at::relu's threshold_backward would. A feed-forward layer's
// first half (nn/positionwise_feed_forward.h, Transformer-XL's): at the Transformer bench shape
// ([992, 256] x [256, 1024], two threads) its forward took 2.7-2.8 ms against 3.2-3.3 for the
// product then at::relu, its backward the same 6.4-6.7 ms (docs/benchmarks.md). Differentiable
// as cpu_float_linear.
torch::Tensor cpu_float_linear_relu(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// cpu_float_linear where it takes x, else at::linear (autocast's bf16 product included). For
// layers whose bf16 products stay autocast's: ConvS2S's trained 3% slower in bf16 through
// nn/cpu_bf16_linear.h on a 2-core Zen 4 without AMX (nn/linear_product.h takes both).
torch::Tensor float_linear_or_aten(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// x Wᵀ for a layer whose weight W [N, K] meets many inputs between its changes (evaluation,
// decoding): from a [K, N] copy of W, kept and made again whenever W changes (another tensor or
// view, its data moved, or written in place: its version counter), where cpu_float_linear would
// take the product and nothing is recorded (`applies`). Elsewhere the caller's own product runs
// and the copy is dropped (training keeps no copy beside the weights). nn/linear_product.h's
// overloads that take one are how layers use it.
//
// Why: oneDNN's sgemm multiplies by a [K, N] matrix faster than by the [N, K] weight's transposed
// view: the LSTM language model's output layer, [350, 200] x [200, 10,000], in 3.7 ms against
// 4.3; Transformer-XL's feed-forward's second product, [1024, 1024] x [1024, 256], in 1.28-1.37 ms
// against 1.64-1.75 (the 2-core Zen 5 EPYC, 2 threads; docs/benchmarks.md). A copy costs about
// what one product does, so it pays from the third product with the same weight. It costs a
// second copy of the weight in memory.
class TransposedWeight {
 public:
  TransposedWeight() = default;
  // Copies start empty (a module that holds one may be copied by its clone()).
  TransposedWeight(const TransposedWeight&) {}
  TransposedWeight& operator=(const TransposedWeight&);

  // Whether `product` takes x's product with `weight` (and `bias`): nothing recorded (grad mode
  // off, or no input that needs a gradient) and takes_cpu_float_linear.
  static bool applies(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

  // x [..., K], weight [N, K], bias [N] or undefined -> [..., N]: x (s W)ᵀ + b, then max(., 0)
  // where `relu`; s = weight_scale, which the kept copy holds multiplied in (s W rounded as
  // `weight * s` rounds it). Needs applies(x, weight, bias).
  torch::Tensor product(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, bool relu,
                        double weight_scale = 1.0);

  // Forgets the copy (a caller whose product did not come here).
  void drop();

  // x [..., K], weight [N, K] -> [..., N]: x Wᵀ, as float_linear_or_aten(x, weight, {}), from the
  // kept copy where applies().
  torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight);

 private:
  std::mutex lock_;
  TensorIdentity source_;  // the weight the copy was made from
  double scale_ = 1.0;
  torch::Tensor columns_;  // [K, N]: (s W)ᵀ
};

}  // namespace mixseq
