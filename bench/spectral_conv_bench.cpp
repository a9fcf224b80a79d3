// The direct 1-D convolution (at::conv1d, oneDNN) against its spectral evaluation
// (nn/spectral_conv1d.h) at each FFT size, over kernel widths, at a shape of Jasper's blocks:
// the figures behind spectral_conv1d_fft_size's estimate. One JSON line per kernel and method,
// with the size the estimate picks (for its reference load of 8 x 200 frames).
//
//   spectral_conv_bench [--threads N] [--batch 8] [--frames 200] [--channels 256]
#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/utils.h>

#include <iostream>
#include <string>

#include "convolution_bench_shape.h"
#include "mixseq/nn/spectral_conv1d.h"
#include "mixseq/util/cpu_kernels.h"

int main(int argc, char** argv) {
  const auto& kernels = mixseq::choose_cpu_kernels();
  const auto shape = mixseq::bench::convolution_bench_shape(argc, argv);
  const int threads = shape.threads;
  const int64_t batch = shape.batch, frames = shape.frames, channels = shape.channels;
  torch::NoGradGuard no_grad;
  const auto x = at::randn({batch, channels, frames});
  for (const auto& [taps, dilation] : {std::pair<int64_t, int64_t>{3, 1}, {5, 1}, {7, 1}, {9, 1}, {11, 1}, {13, 1},
                                       {17, 1}, {21, 1}, {25, 1}, {29, 2}, {33, 1}}) {
    const auto w = at::randn({channels, channels, taps});
    const auto bias = at::randn({channels});
    const int64_t span = (taps - 1) * dilation + 1, padding = span / 2;
    const int64_t chosen = mixseq::spectral_conv1d_fft_size(taps, span, channels, channels);
    auto line = [&](const std::string& method, int64_t fft_size, double ms) {
      std::cout << nlohmann::json{{"bench", "spectral_conv"}, {"taps", taps}, {"dilation", dilation},
                                  {"method", method}, {"fft_size", fft_size}, {"chosen", chosen},
                                  {"batch", batch}, {"frames", frames}, {"channels", channels},
                                  {"threads", threads}, {"ms", ms}, {"blas_core", kernels.blas_core}}
                       .dump()
                << std::endl;
    };
    line("direct", 0, mixseq::bench::milliseconds_per_call([&] { return at::conv1d(x, w, bias, 1, padding, dilation); }));
    for (int64_t n = 8; n <= 512; n *= 2) {
      if (n <= span) continue;
      const auto plan = mixseq::plan_spectral_conv1d(w, dilation, padding, n, {}, bias);
      line("spectral", n, mixseq::bench::milliseconds_per_call([&] { return mixseq::spectral_conv1d(x, plan); }));
    }
  }
}
