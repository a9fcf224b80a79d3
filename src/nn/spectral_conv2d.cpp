#include "mixseq/nn/spectral_conv2d.h"

#include <ATen/Parallel.h>
#include <torch/fft.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <utility>

#include "mixseq/nn/batched_matmul.h"
#include "mixseq/util/error.h"
#include "nn/spectral_products.h"

namespace mixseq {

using spectral::ceil_div;
using spectral::power_of_two;

SpectralConv2dPlan plan_spectral_conv2d(const torch::Tensor& weight, int64_t height, int64_t stride_height,
                                        int64_t fft_width, const torch::Tensor& scale, const torch::Tensor& bias) {
  MIXSEQ_CHECK(weight.dim() == 4, "spectral_conv2d: the weight must be [Co, Ci, KH, KW], not ", weight.sizes());
  const int64_t out_channels = weight.size(0), in_channels = weight.size(1);
  const int64_t kernel_height = weight.size(2), kernel_width = weight.size(3);
  MIXSEQ_CHECK(height >= kernel_height && stride_height >= 1, "spectral_conv2d: ", height,
               " rows are too few for a kernel of ", kernel_height, " (stride ", stride_height, ")");
  MIXSEQ_CHECK(power_of_two(fft_width) && fft_width > kernel_width, "spectral_conv2d: the FFT width (", fft_width,
               ") must be a power of two above the kernel's width (", kernel_width, ")");
  int64_t fft_height = 1;
  while (fft_height < height) fft_height *= 2;
  torch::NoGradGuard no_grad;
  const torch::Tensor w = spectral::scaled_weight(weight, scale, "spectral_conv2d");
  // A correlation: the flipped kernel's circular convolution. [Co, Ci, NH, FW] -> [NH FW, Ci, Co]
  const torch::Tensor spectra = torch::fft::rfft2(w.flip({2, 3}), torch::IntArrayRef{fft_height, fft_width}, {2, 3});
  const int64_t bins = fft_height * (fft_width / 2 + 1);
  const torch::Tensor per_bin = spectra.reshape({out_channels, in_channels, bins}).permute({2, 1, 0});
  SpectralConv2dPlan plan;
  // With a stride s along the first axis whose kept rows are all ≡ KH - 1 (mod s), only those rows'
  // inverse is needed: y[s m + r] is 1/s times the inverse FFT of size NH / s of the spectrum's s
  // folds added up (r = 0 here). The 1/s goes into the spectra.
  plan.folds = stride_height > 1 && fft_height % stride_height == 0 && (kernel_height - 1) % stride_height == 0
                   ? stride_height
                   : 1;
  plan.spectra = spectral::gauss_spectra(per_bin / static_cast<double>(plan.folds));
  plan.bias = spectral::checked_bias(bias, out_channels, "spectral_conv2d");
  plan.height = height;
  plan.fft_height = fft_height;
  plan.fft_width = fft_width;
  plan.kernel_height = kernel_height;
  plan.kernel_width = kernel_width;
  plan.stride_height = stride_height;
  plan.in_channels = in_channels;
  plan.out_channels = out_channels;
  return plan;
}

torch::Tensor spectral_conv2d(const torch::Tensor& x, const SpectralConv2dPlan& plan) {
  MIXSEQ_CHECK(x.dim() == 4 && x.size(1) == plan.in_channels && x.size(2) == plan.height &&
                   x.scalar_type() == torch::kFloat,
               "spectral_conv2d: the input must be float [B, ", plan.in_channels, ", ", plan.height, ", W], not ",
               x.scalar_type(), " ", x.sizes());
  const int64_t batch = x.size(0), width = x.size(3), nh = plan.fft_height, nw = plan.fft_width;
  const int64_t out_width = width - plan.kernel_width + 1;
  MIXSEQ_CHECK(out_width >= 1, "spectral_conv2d: ", width, " columns are too few for a kernel of ",
               plan.kernel_width);
  torch::NoGradGuard no_grad;
  const int64_t hop = nw - plan.kernel_width + 1, segments = ceil_div(out_width, hop);
  const int64_t fw = nw / 2 + 1, bins = nh * fw, ci = plan.in_channels, co = plan.out_channels;
  const int64_t padded = (segments - 1) * hop + nw;
  // [B, Ci, NH, padded]: zero rows below, zero columns after (overlap-save needs whole segments)
  const torch::Tensor input = torch::constant_pad_nd(x, {0, padded - width, 0, nh - plan.height});
  const int64_t threads = at::get_num_threads();
  // Channels last through the FFTs, so that the copies to and from the products' layout read and
  // write along the channels: [B, S, NH, NW, Ci] -> spectra [B, S, NH, FW, Ci] -> rows [3, NH, FW, B, S, Ci]
  torch::Tensor rows = torch::empty({3, nh, fw, batch, segments, ci}, x.options());
  at::parallel_for(0, batch, ceil_div(batch, threads), [&](int64_t begin, int64_t end) {
    const int64_t count = end - begin;
    const torch::Tensor channels_last =
        input.narrow(0, begin, count).unfold(3, nw, hop).permute({0, 3, 2, 4, 1}).contiguous();
    const torch::Tensor spectra = torch::fft::rfft2(channels_last, torch::IntArrayRef{nh, nw}, {2, 3});
    torch::Tensor slice = rows.narrow(3, begin, count);
    slice.narrow(0, 0, 2).copy_(at::view_as_real(spectra).permute({5, 2, 3, 0, 1, 4}));
    torch::Tensor sums = slice[2];
    at::add_out(sums, slice[0], slice[1]);
  });
  const torch::Tensor t = batched_matmul(rows.view({3, bins, batch * segments, ci}), plan.spectra)
                              .view({3, nh, fw, batch, segments, co});
  const int64_t out_height = (plan.height - plan.kernel_height) / plan.stride_height + 1;
  torch::Tensor y = torch::empty({batch, co, out_height, out_width}, x.options());
  at::parallel_for(0, batch, ceil_div(batch, threads), [&](int64_t begin, int64_t end) {
    const int64_t count = end - begin;
    const torch::Tensor slice = t.narrow(3, begin, count);
    // -> [B, S, NH / folds, FW, Co] complex: re = t0 - t1, im = t2 - t0 - t1, each summed over its folds
    const int64_t folds = plan.folds, rows_out = nh / folds;
    const torch::Tensor product_spectra =
        torch::empty({count, segments, rows_out, fw, co}, x.options().dtype(torch::kComplexFloat));
    const torch::Tensor parts = at::view_as_real(product_spectra).permute({5, 2, 3, 0, 1, 4});
    slice[2].sub_(slice[0]).sub_(slice[1]);
    slice[0].sub_(slice[1]);
    for (const auto& [part, source] : {std::pair<int64_t, int64_t>{0, 0}, {1, 2}}) {
      torch::Tensor target = parts[part];
      const torch::Tensor folded = slice[source].view({folds, rows_out, fw, count, segments, co});
      if (folds == 1) target.copy_(folded[0]);
      else at::sum_out(target, folded, {0});
    }
    // [B, S, NH / folds, NW, Co]: the kept rows, each segment's last `hop` columns -> [B, Co, H', W']
    const int64_t first_row = plan.kernel_height - 1, step = plan.stride_height;
    const torch::Tensor inverse = torch::fft::irfft2(product_spectra, torch::IntArrayRef{rows_out, nw}, {2, 3});
    const torch::Tensor kept = folds > 1 ? inverse.narrow(2, first_row / folds, out_height)
                                         : inverse.slice(2, first_row, plan.height, step);
    const torch::Tensor whole = kept
                                    .narrow(3, plan.kernel_width - 1, hop)  // [B, S, H', hop, Co]
                                    .permute({0, 4, 2, 1, 3})
                                    .reshape({count, co, out_height, segments * hop})
                                    .narrow(3, 0, out_width);
    torch::Tensor out = y.narrow(0, begin, count);
    if (plan.bias.defined()) at::add_out(out, whole, plan.bias.view({1, co, 1, 1}));
    else out.copy_(whole);
  });
  return y;
}

}  // namespace mixseq
