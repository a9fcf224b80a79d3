// A 1-D convolution's training pass (forward, then the input's and the weight's gradients) at a
// shape of Jasper's blocks, over kernel widths: LibTorch's at::conv1d (oneDNN) against
// nn/conv1d_products.h's three products, each in fp32 and under CPU bf16 autocast (an fp32
// weight, a bf16 input, as a block's convolution sees them). The figures behind
// kConv1dProductsMinTaps. One JSON line per kernel, precision and method.
//
//   conv1d_training_bench [--threads N] [--batch 8] [--frames 200] [--channels 256]
#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <iostream>
#include <string>

#include "convolution_bench_shape.h"
#include "mixseq/nn/conv1d_products.h"
#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/mixed_precision.h"

namespace {

// The best of 5 rounds of milliseconds_per_call, ms a call.
template <typename F>
double best_milliseconds(F&& f) {
  double best = mixseq::bench::milliseconds_per_call(f);
  for (int round = 1; round < 5; ++round) best = std::min(best, mixseq::bench::milliseconds_per_call(f, 0));
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const auto& kernels = mixseq::choose_cpu_kernels();
  const auto shape = mixseq::bench::convolution_bench_shape(argc, argv);
  const int threads = shape.threads;
  const int64_t batch = shape.batch, frames = shape.frames, channels = shape.channels;
  for (const auto& [taps, dilation] :
       {std::pair<int64_t, int64_t>{11, 1}, {13, 1}, {17, 1}, {21, 1}, {25, 1}, {29, 2}, {33, 1}}) {
    const int64_t padding = (taps - 1) * dilation / 2;
    for (const bool bf16 : {false, true}) {
      auto x = at::randn({batch, channels, frames}).to(bf16 ? at::kBFloat16 : at::kFloat).requires_grad_();
      auto w = (at::randn({channels, channels, taps}) * 0.05).requires_grad_();
      const auto g = at::randn({batch, channels, frames}).to(x.scalar_type());
      const auto pass = [&](bool products) {
        mixseq::AutocastScope autocast(bf16 ? mixseq::Precision::kBf16 : mixseq::Precision::kFp32,
                                       torch::Device(torch::kCPU));
        const auto y = products ? mixseq::conv1d_products(x, w, at::Tensor(), padding, dilation)
                                : at::conv1d(x, w, at::Tensor(), 1, padding, dilation);
        y.backward(g);
        x.mutable_grad().reset();
        w.mutable_grad().reset();
      };
      const double gflop = 6.0 * batch * frames * channels * channels * taps / 1e9;  // three products
      for (const bool products : {false, true}) {
        const double ms = best_milliseconds([&] { pass(products); });
        std::cout << nlohmann::json{{"bench", "conv1d_training"}, {"taps", taps}, {"dilation", dilation},
                                    {"precision", bf16 ? "bf16" : "fp32"},
                                    {"method", products ? "products" : "at::conv1d"}, {"ms", ms},
                                    {"gflop_per_s", gflop / ms * 1e3}, {"batch", batch}, {"frames", frames},
                                    {"channels", channels}, {"threads", threads}, {"blas_core", kernels.blas_core}}
                         .dump()
                  << std::endl;
      }
    }
  }
  return 0;
}
