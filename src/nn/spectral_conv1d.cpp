#include "mixseq/nn/spectral_conv1d.h"

#include <ATen/Parallel.h>
#include <torch/fft.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <limits>

#include "mixseq/nn/batched_matmul.h"
#include "mixseq/util/error.h"
#include "nn/spectral_products.h"

namespace mixseq {
namespace {

using spectral::ceil_div;
using spectral::power_of_two;

// The time of a spectral convolution in units of one multiply-add of the direct convolution
// (oneDNN), fitted to bench/spectral_conv_bench at 64 and 256 channels on one core: per bin, its
// rows' share of the three products plus a fixed part (BLAS runs short products below its peak:
// about 8 rows' worth) at 5.5 units per complex multiply-add; per row, the two FFTs and the copies
// around them, 127 units per frame and channel.
double spectral_cost(int64_t fft_size, int64_t span, int64_t batch, int64_t frames, int64_t in_channels,
                     int64_t out_channels) {
  const int64_t hop = fft_size - span + 1;
  const double rows = static_cast<double>(batch * ceil_div(frames, hop));
  const double bins = static_cast<double>(fft_size / 2 + 1);
  const double products = 5.46 * bins * (rows + 8.0) * static_cast<double>(in_channels * out_channels);
  const double transforms = 127.0 * rows * static_cast<double>(fft_size * (in_channels + out_channels));
  return products + transforms;
}

}  // namespace

int64_t spectral_conv1d_fft_size(int64_t taps, int64_t span, int64_t in_channels, int64_t out_channels) {
  if (taps < 2) return 0;
  // The reference load: 8 utterances of 200 output frames (Jasper's bench shape, about a batch of
  // 4 s utterances after the prologue's stride 2).
  const int64_t batch = 8, frames = 200;
  const double direct = static_cast<double>(batch * frames * taps) * static_cast<double>(in_channels * out_channels);
  double best_cost = std::numeric_limits<double>::infinity();
  int64_t best = 0;
  int64_t n = 8;
  while (n <= span) n *= 2;
  for (; n <= 4096; n *= 2) {
    const double cost = spectral_cost(n, span, batch, frames, in_channels, out_channels);
    if (cost < best_cost) best_cost = cost, best = n;
  }
  return best_cost < direct ? best : 0;
}

SpectralConv1dPlan plan_spectral_conv1d(const torch::Tensor& weight, int64_t dilation, int64_t padding,
                                        int64_t fft_size, const torch::Tensor& scale, const torch::Tensor& bias) {
  MIXSEQ_CHECK(weight.dim() == 3, "spectral_conv1d: the weight must be [Co, Ci, K], not ", weight.sizes());
  const int64_t out_channels = weight.size(0), in_channels = weight.size(1), taps = weight.size(2);
  MIXSEQ_CHECK(dilation >= 1 && padding >= 0, "spectral_conv1d: dilation (", dilation, ") must be >= 1, padding (",
               padding, ") >= 0");
  const int64_t span = (taps - 1) * dilation + 1;
  MIXSEQ_CHECK(fft_size > span && power_of_two(fft_size), "spectral_conv1d: the FFT size (", fft_size,
               ") must be a power of two above the kernel's span (", span, ")");
  torch::NoGradGuard no_grad;
  const torch::Tensor w = spectral::scaled_weight(weight, scale, "spectral_conv1d");
  torch::Tensor dilated = torch::zeros({out_channels, in_channels, span}, w.options());
  dilated.slice(2, 0, span, dilation).copy_(w);
  // The convolution is a correlation: flip the kernel so that a circular convolution computes it.
  const torch::Tensor spectra = torch::fft::rfft(dilated.flip({2}), fft_size, 2).permute({2, 1, 0});  // [F, Ci, Co]
  SpectralConv1dPlan plan;
  plan.spectra = spectral::gauss_spectra(spectra);
  plan.bias = spectral::checked_bias(bias, out_channels, "spectral_conv1d");
  plan.fft_size = fft_size;
  plan.span = span;
  plan.padding = padding;
  plan.in_channels = in_channels;
  plan.out_channels = out_channels;
  return plan;
}

torch::Tensor spectral_conv1d(const torch::Tensor& x, const SpectralConv1dPlan& plan) {
  MIXSEQ_CHECK(x.dim() == 3 && x.size(1) == plan.in_channels && x.scalar_type() == torch::kFloat,
               "spectral_conv1d: the input must be float [B, ", plan.in_channels, ", T], not ", x.scalar_type(), " ",
               x.sizes());
  const int64_t batch = x.size(0), frames = x.size(2), n = plan.fft_size;
  const int64_t out_frames = frames + 2 * plan.padding - plan.span + 1;
  MIXSEQ_CHECK(out_frames >= 1, "spectral_conv1d: ", frames, " frames are too few for a kernel spanning ", plan.span,
               " with padding ", plan.padding);
  torch::NoGradGuard no_grad;
  const int64_t hop = n - plan.span + 1, segments = ceil_div(out_frames, hop);
  const int64_t bins = n / 2 + 1, ci = plan.in_channels, co = plan.out_channels;
  const int64_t padded = (segments - 1) * hop + n;
  const torch::Tensor input = torch::constant_pad_nd(x, {plan.padding, padded - frames - plan.padding});
  // LibTorch's FFTs run on one thread: the steps around the products go in channel slices over the threads.
  const int64_t threads = at::get_num_threads();
  // [B, Ci, segments, N] -> spectra [B, Ci, segments, F] -> rows [3, F, B * segments, Ci]: the real parts,
  // the imaginary parts and their sums, for Gauss's three real products per complex one
  torch::Tensor rows = torch::empty({3, bins, batch, segments, ci}, x.options());
  at::parallel_for(0, ci, ceil_div(ci, threads), [&](int64_t begin, int64_t end) {
    const torch::Tensor spectra = torch::fft::rfft(input.narrow(1, begin, end - begin).unfold(2, n, hop), n, -1);
    torch::Tensor slice = rows.narrow(4, begin, end - begin);
    slice.narrow(0, 0, 2).copy_(at::view_as_real(spectra).permute({4, 3, 0, 2, 1}));
    torch::Tensor sums = slice[2];
    at::add_out(sums, slice[0], slice[1]);
  });
  // t [3, F, B * segments, Co]: x_re w_re, x_im w_im, (x_re + x_im)(w_re + w_im)
  const torch::Tensor t =
      batched_matmul(rows.view({3, bins, batch * segments, ci}), plan.spectra).view({3, bins, batch, segments, co});
  torch::Tensor y = torch::empty({batch, co, out_frames}, x.options());
  at::parallel_for(0, co, ceil_div(co, threads), [&](int64_t begin, int64_t end) {
    // -> [B, Co, segments, F] complex: re = t0 - t1, im = t2 - t0 - t1
    const int64_t width = end - begin;
    const torch::Tensor slice = t.narrow(4, begin, width);
    const torch::Tensor product_spectra =
        torch::empty({batch, width, segments, bins}, x.options().dtype(torch::kComplexFloat));
    const torch::Tensor parts = at::view_as_real(product_spectra).permute({4, 3, 0, 2, 1});  // [2, F, B, segments, Co]
    slice[2].sub_(slice[0]).sub_(slice[1]);
    slice[0].sub_(slice[1]);
    parts[0].copy_(slice[0]);
    parts[1].copy_(slice[2]);
    // Each segment's last `hop` frames are whole: [B, Co, segments, N] -> [B, Co, T']
    const torch::Tensor whole = torch::fft::irfft(product_spectra, n, -1)
                                    .narrow(3, plan.span - 1, hop)
                                    .reshape({batch, width, segments * hop})
                                    .narrow(2, 0, out_frames);
    torch::Tensor out = y.narrow(1, begin, width);
    if (plan.bias.defined()) at::add_out(out, whole, plan.bias.narrow(0, begin, width).view({1, width, 1}));
    else out.copy_(whole);
  });
  return y;
}

}  // namespace mixseq
