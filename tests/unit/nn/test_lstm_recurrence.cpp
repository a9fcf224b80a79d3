// lstm_recurrence against LibTorch's LSTM (outputs, final state, and the gradients of every
// input and weight), against finite differences, and where it applies.
#include "mixseq/nn/lstm_recurrence.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/modules/rnn.h>

#include <tuple>
#include <vector>

#include "gradient_check.h"
#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/nn/packed_bf16_matrix.h"
#include "nn/lstm_hidden_panels.h"
#include "thread_count.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

using test::ThreadCount;

LstmWeights weights_of(torch::nn::LSTM& lstm) {
  auto p = lstm->named_parameters();
  return {p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"]};
}

TEST(LstmHiddenPanels, AddTheProductsOfEachGatesUnits) {
  if (!LstmHiddenPanels::available()) GTEST_SKIP() << "the CPU has no AVX-512F";
  at::manual_seed(11);
  // H 6: one part-filled panel; 33 and 40: full panels and a part-filled one. Rows 1 to 13: blocks
  // of 6 and every remainder.
  for (const int64_t H : {6, 33, 40}) {
    const auto w_hh = at::randn({4 * H, H});
    LstmHiddenPanels panels(w_hh.data_ptr<float>(), H, H);
    panels.pack(0, panels.panels());
    for (int64_t rows = 1; rows <= 13; ++rows) {
      const auto a = at::randn({rows, H + 3}).slice(1, 0, H);  // rows H + 3 apart
      const auto out = at::randn({rows, 4 * H + 5}), expected = out.slice(1, 0, 4 * H) + at::mm(a, w_hh.t());
      const auto untouched = out.slice(1, 4 * H).clone();
      panels.add_products(a.data_ptr<float>(), H + 3, rows, 0, panels.panels(), out.data_ptr<float>(), 4 * H + 5);
      EXPECT_TRUE(at::allclose(out.slice(1, 0, 4 * H), expected, 1e-5, 1e-5))
          << "H " << H << ", rows " << rows << ": " << (out.slice(1, 0, 4 * H) - expected).abs().max();
      EXPECT_TRUE(at::equal(out.slice(1, 4 * H), untouched)) << "H " << H << ", rows " << rows;
    }
    // A range of panels adds to its own units only.
    if (panels.panels() > 1) {
      const auto a = at::randn({7, H});
      const auto out = at::zeros({7, 4 * H});
      panels.add_products(a.data_ptr<float>(), H, 7, 1, 2, out.data_ptr<float>(), 4 * H);
      const auto full = at::mm(a, w_hh.t()).view({7, 4, H});
      const int64_t end = std::min<int64_t>(H, 2 * LstmHiddenPanels::kUnits);
      const auto got = out.view({7, 4, H});
      constexpr int64_t first = LstmHiddenPanels::kUnits;  // panel 1's first unit
      EXPECT_TRUE(at::allclose(got.slice(2, first, end), full.slice(2, first, end), 1e-5, 1e-5));
      EXPECT_EQ(got.slice(2, 0, LstmHiddenPanels::kUnits).abs().max().item<float>(), 0.0f);
      if (end < H) EXPECT_EQ(got.slice(2, end).abs().max().item<float>(), 0.0f);
    }
  }
}

TEST(LstmRecurrence, MatchesTorchLstmWithGradients) {
  at::manual_seed(1);
  // H 33: gate blocks that are not vector-aligned; T 1: a decoding step. T >= 8 on AVX-512 runs
  // on panels (nn/lstm_hidden_panels.h): B 13 and H 40 give row blocks of 6 and a remainder,
  // panels of 16 units and a part-filled one, on one thread and on two (the panels shared out).
  for (const auto& [B, T, Din, H, threads] :
       {std::tuple{3, 7, 5, 6, 1}, std::tuple{4, 1, 9, 33, 2}, std::tuple{2, 12, 16, 33, 1},
        std::tuple{13, 9, 7, 40, 2}, std::tuple{13, 8, 7, 40, 1}, std::tuple{1, 8, 3, 17, 2}}) {
    const ThreadCount thread_count(threads);
    torch::nn::LSTM lstm(torch::nn::LSTMOptions(Din, H).batch_first(true));
    {
      torch::NoGradGuard no_grad;
      for (auto& p : lstm->parameters()) p.uniform_(-0.5, 0.5);  // gates away from their linear range
    }
    const auto x = at::randn({B, T, Din}).requires_grad_();
    const auto h0 = at::randn({B, H}).requires_grad_();
    const auto c0 = at::randn({B, H}).requires_grad_();
    const auto w_out = at::randn({B, T, H}), w_h = at::randn({B, H}), w_c = at::randn({B, H});
    const auto weights = weights_of(lstm);
    ASSERT_TRUE(lstm_recurrence_applies(x, weights));

    const auto gradients = [&](const torch::Tensor& loss) {
      std::vector<torch::Tensor> inputs{x, h0, c0, weights.w_ih, weights.w_hh, weights.b_ih, weights.b_hh};
      return torch::autograd::grad({loss}, inputs);
    };
    const auto [y, h, c] = lstm_recurrence(x, h0, c0, weights);
    const auto ours = gradients((y * w_out).sum() + (h * w_h).sum() + (c * w_c).sum());
    const auto [y_ref, state] = lstm->forward(x, std::make_tuple(h0.unsqueeze(0), c0.unsqueeze(0)));
    const auto h_ref = std::get<0>(state).squeeze(0), c_ref = std::get<1>(state).squeeze(0);
    const auto theirs = gradients((y_ref * w_out).sum() + (h_ref * w_h).sum() + (c_ref * w_c).sum());

    EXPECT_TRUE(at::allclose(y, y_ref, 1e-5, 1e-6)) << (y - y_ref).abs().max();
    EXPECT_TRUE(at::allclose(h, h_ref, 1e-5, 1e-6));
    EXPECT_TRUE(at::allclose(c, c_ref, 1e-5, 1e-6));
    const char* names[] = {"x", "h0", "c0", "w_ih", "w_hh", "b_ih", "b_hh"};
    for (size_t i = 0; i < ours.size(); ++i)
      EXPECT_TRUE(at::allclose(ours[i], theirs[i], 1e-4, 1e-5)) << names[i] << ": " << (ours[i] - theirs[i]).abs().max();
  }
}

// On panels the threads share out the sentences (W_hh small, two or more sentences a thread) or
// the hidden units (few sentences, or a W_hh too large for each thread's cache): either way every
// product is the same sum as on one thread, and so are the outputs, bit for bit, where each
// thread's cell covers whole vectors of 16 units. (Sharing out units of a part-filled panel, H 40
// on two threads, puts a tail of 8 units through the tanh's scalar tail on one thread and through
// its vector body on the other: equal to rounding only.)
TEST(LstmRecurrence, PanelsGiveTheSameBitsOnOneThreadAndOnTwo) {
  if (!LstmHiddenPanels::available()) GTEST_SKIP() << "the CPU has no AVX-512F";
  at::manual_seed(9);
  torch::NoGradGuard no_grad;
  // sentences shared out (B 13, 10 and 4: 7 + 6, 5 + 5, 2 + 2, part-filled panels included),
  // units shared out (B 3; and H 256, whose packed W_hh is 1 MiB).
  for (const auto& [B, H] : {std::pair{13, 40}, std::pair{10, 200}, std::pair{4, 33}, std::pair{3, 48},
                             std::pair{8, 256}}) {
    const int64_t T = 9, Din = 12;
    const LstmWeights w{at::randn({4 * H, Din}) * 0.3, at::randn({4 * H, H}) * 0.3, at::randn({4 * H}) * 0.1,
                        at::randn({4 * H}) * 0.1};
    const auto x = at::randn({B, T, Din}), h0 = at::randn({B, H}), c0 = at::randn({B, H});
    std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> one, two;
    {
      const ThreadCount threads(1);
      one = lstm_recurrence(x, h0, c0, w);
    }
    {
      const ThreadCount threads(2);
      two = lstm_recurrence(x, h0, c0, w);
    }
    EXPECT_TRUE(at::equal(std::get<0>(one), std::get<0>(two))) << "B " << B << " H " << H;
    EXPECT_TRUE(at::equal(std::get<1>(one), std::get<1>(two))) << "B " << B << " H " << H;
    EXPECT_TRUE(at::equal(std::get<2>(one), std::get<2>(two))) << "B " << B << " H " << H;
  }
}

// A panel cache keeps W_hh laid out between calls that record nothing, gives the same bits as
// laying it out again, and lets go of it when W_hh changes in place or is another tensor, and at
// a call that records a graph (training may write the weights through their data).
TEST(LstmRecurrence, PanelCacheKeepsWhhUntilItChanges) {
  if (!LstmHiddenPanels::available()) GTEST_SKIP() << "the CPU has no AVX-512F";
  at::manual_seed(10);
  const int64_t B = 6, T = 9, Din = 8, H = 40;
  const auto x = at::randn({B, T, Din}), h0 = at::randn({B, H}), c0 = at::randn({B, H});
  LstmWeights w{at::randn({4 * H, Din}) * 0.3, at::randn({4 * H, H}) * 0.3, at::randn({4 * H}) * 0.1,
                at::randn({4 * H}) * 0.1};
  LstmPanelCache cache;
  auto cached = w;
  cached.panel_cache = &cache;
  for (const int threads : {1, 2}) {
    const ThreadCount thread_count(threads);
    {
      torch::NoGradGuard no_grad;
      const auto fresh = std::get<0>(lstm_recurrence(x, h0, c0, w));
      EXPECT_TRUE(at::equal(std::get<0>(lstm_recurrence(x, h0, c0, cached)), fresh));  // lays it out, keeps it
      ASSERT_TRUE(cache.holds(w.w_hh));
      EXPECT_TRUE(at::equal(std::get<0>(lstm_recurrence(x, h0, c0, cached)), fresh));  // from the cache
      w.w_hh.mul_(0.5);  // in place: the version counter moves
      EXPECT_FALSE(cache.holds(w.w_hh));
      EXPECT_TRUE(at::equal(std::get<0>(lstm_recurrence(x, h0, c0, cached)), std::get<0>(lstm_recurrence(x, h0, c0, w))));
      EXPECT_TRUE(cache.holds(w.w_hh));
      const auto other = w.w_hh.clone();  // the same values in another tensor
      EXPECT_FALSE(cache.holds(other));
    }
    // Recording a graph: computed without the cache, which lets go of what it held.
    auto recorded = cached;
    recorded.w_hh = w.w_hh.detach().clone().requires_grad_();
    const auto y = std::get<0>(lstm_recurrence(x, h0, c0, recorded));
    ASSERT_TRUE(y.requires_grad());
    EXPECT_FALSE(cache.holds(recorded.w_hh));
    EXPECT_FALSE(cache.holds(w.w_hh));
    torch::NoGradGuard no_grad;
    lstm_recurrence(x, h0, c0, cached);
    EXPECT_TRUE(cache.holds(w.w_hh));
  }
  const LstmPanelCache copy = cache;  // copies start empty
  EXPECT_FALSE(copy.holds(w.w_hh));
}

TEST(LstmRecurrence, MatchesFiniteDifferences) {
  at::manual_seed(2);
  const int64_t B = 2, T = 3, Din = 3, H = 4;
  const auto opts = at::TensorOptions().dtype(at::kDouble);
  const auto x = at::randn({B, T, Din}, opts).requires_grad_();
  const auto h0 = at::randn({B, H}, opts).requires_grad_(), c0 = at::randn({B, H}, opts).requires_grad_();
  const LstmWeights w{at::randn({4 * H, Din}, opts).requires_grad_(), at::randn({4 * H, H}, opts).requires_grad_(),
                      at::randn({4 * H}, opts).requires_grad_(), at::randn({4 * H}, opts).requires_grad_()};
  const auto w_out = at::randn({B, T, H}, opts), w_c = at::randn({B, H}, opts);
  test::expect_gradients_match_finite_differences(
      [&] {
        const auto [y, h, c] = lstm_recurrence(x, h0, c0, w);
        return (y * w_out).sum() + (c * w_c).sum();
      },
      {{"x", x}, {"h0", h0}, {"c0", c0}, {"w_ih", w.w_ih}, {"w_hh", w.w_hh}, {"b_ih", w.b_ih}, {"b_hh", w.b_hh}});
}

TEST(LstmRecurrence, UnderBf16AutocastMatchesTorchLstmUnderIt) {
  at::manual_seed(3);
  const int64_t B = 4, T = 6, Din = 16, H = 32;
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(Din, H).batch_first(true));
  const auto weights = weights_of(lstm);
  const auto x = at::randn({B, T, Din}).requires_grad_();
  const auto h0 = at::randn({B, H}), c0 = at::randn({B, H});
  const auto w_out = at::randn({B, T, H});
  compat::set_autocast(c10::kCPU, true, at::kBFloat16);
  ASSERT_TRUE(lstm_recurrence_applies(x, weights));
  const auto y = std::get<0>(lstm_recurrence(x, h0, c0, weights));
  const auto y_ref = std::get<0>(lstm->forward(x, std::make_tuple(h0.unsqueeze(0), c0.unsqueeze(0))));
  compat::set_autocast(c10::kCPU, false, at::kBFloat16);
  EXPECT_EQ(y.scalar_type(), at::kFloat);  // the cell stays in fp32
  EXPECT_TRUE(at::allclose(y, y_ref.to(at::kFloat), 2e-2, 2e-2)) << (y - y_ref).abs().max();
  // bf16 products: closer to LibTorch's bf16 run than to fp32 would be a coincidence; near both.
  const auto y_fp32 = std::get<0>(lstm_recurrence(x, h0, c0, weights));
  EXPECT_GT((y - y_fp32).abs().max().item<double>(), 0.0);
  const auto ours = torch::autograd::grad({(y * w_out).sum()}, {x, weights.w_ih, weights.w_hh});
  const auto theirs = torch::autograd::grad({(y_ref * w_out).sum()}, {x, weights.w_ih, weights.w_hh});
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].scalar_type(), at::kFloat);
    const double scale = theirs[i].abs().max().item<double>();
    EXPECT_LT((ours[i] - theirs[i].to(at::kFloat)).abs().max().item<double>(), 0.05 * scale) << i;
  }
}

// Under bf16 autocast the only roundings are those of the products' operands (x, h_{t-1} and
// the weights, to bf16) and of x W_ihᵀ's result (LibTorch's bf16 at::mm): h_{t-1} W_hhᵀ is summed
// in fp32 straight into the gates (nn/bf16_matmul.h), the cell is fp32. The reference below makes
// the same roundings step by step with LibTorch's ops.
// H 40: the steps' products through oneDNN's bf16 GEMM; 64: on AMX tiles where the CPU has them
// (nn/packed_bf16_matrix.h takes W_hhᵀ [64, 256] and W_hh [256, 64], not [40, 160]).
void expect_only_the_products_operands_rounded(int64_t H) {
  at::manual_seed(4);
  const int64_t B = 5, T = 7, Din = 24;
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(Din, H).batch_first(true));
  const auto weights = weights_of(lstm);
  const auto x = at::randn({B, T, Din}), h0 = at::randn({B, H}), c0 = at::randn({B, H});
  compat::set_autocast(c10::kCPU, true, at::kBFloat16);
  const auto [y, h_last, c_last] = lstm_recurrence(x, h0, c0, weights);
  compat::set_autocast(c10::kCPU, false, at::kBFloat16);

  const auto rounded = [](const at::Tensor& t) { return t.detach().to(at::kBFloat16).to(at::kFloat); };
  const auto x_gates = at::mm(x.view({B * T, Din}).to(at::kBFloat16), weights.w_ih.detach().t().to(at::kBFloat16))
                           .to(at::kFloat)
                           .view({B, T, 4 * H});
  const auto bias = (weights.b_ih + weights.b_hh).detach();
  auto h = h0, c = c0;
  std::vector<at::Tensor> outputs;
  for (int64_t t = 0; t < T; ++t) {
    const auto gates = x_gates.select(1, t) + bias + at::mm(rounded(h), rounded(weights.w_hh).t());
    const auto parts = gates.chunk(4, 1);
    c = at::sigmoid(parts[1]) * c + at::sigmoid(parts[0]) * at::tanh(parts[2]);
    h = at::sigmoid(parts[3]) * at::tanh(c);
    outputs.push_back(h);
  }
  const auto y_ref = at::stack(outputs, 1);
  EXPECT_TRUE(at::allclose(y, y_ref, 1e-4, 1e-5)) << (y - y_ref).abs().max();
  EXPECT_TRUE(at::allclose(c_last, c, 1e-4, 1e-5)) << (c_last - c).abs().max();
}

TEST(LstmRecurrence, UnderBf16AutocastRoundsOnlyTheProductsOperands) {
  if (!bf16_matmul_is_direct()) GTEST_SKIP() << "the fallback rounds h_{t-1} W_hhᵀ to bf16 as well";
  expect_only_the_products_operands_rounded(40);
}

TEST(LstmRecurrence, OnAmxTilesTooWhereTheShapeFits) {
  if (!PackedBf16Matrix::available()) GTEST_SKIP() << "this CPU (or process) cannot run AMX tiles";
  expect_only_the_products_operands_rounded(64);
}

// The gradients under bf16 autocast, whose products take dgates rounded to bf16 (written by the
// cell's backward pass), against the fp32 ones: within bf16's precision, in fp32.
TEST(LstmRecurrence, UnderBf16AutocastGradientsStayCloseToFp32) {
  at::manual_seed(5);
  const int64_t B = 6, T = 9, Din = 20, H = 48;
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(Din, H).batch_first(true));
  const auto weights = weights_of(lstm);
  const auto x = at::randn({B, T, Din}).requires_grad_();
  const auto h0 = at::randn({B, H}).requires_grad_(), c0 = at::randn({B, H}).requires_grad_();
  const auto w_out = at::randn({B, T, H}), w_c = at::randn({B, H});
  const auto gradients = [&](bool bf16) {
    compat::set_autocast(c10::kCPU, bf16, at::kBFloat16);
    const auto [y, h, c] = lstm_recurrence(x, h0, c0, weights);
    compat::set_autocast(c10::kCPU, false, at::kBFloat16);
    return torch::autograd::grad({(y * w_out).sum() + (c * w_c).sum()},
                                 {x, h0, c0, weights.w_ih, weights.w_hh, weights.b_ih});
  };
  const auto ours = gradients(true), fp32 = gradients(false);
  const char* names[] = {"x", "h0", "c0", "w_ih", "w_hh", "b_ih"};
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].scalar_type(), at::kFloat) << names[i];
    const double scale = fp32[i].abs().max().item<double>();
    EXPECT_LT((ours[i] - fp32[i]).abs().max().item<double>(), 1e-2 * scale) << names[i];
  }
}

TEST(LstmRecurrence, AppliesToFloatWeightsOnTheCpuOutsideOtherAutocastDtypes) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 4).batch_first(true));
  const auto weights = weights_of(lstm);
  EXPECT_TRUE(lstm_recurrence_applies(at::randn({2, 5, 3}), weights));
  EXPECT_TRUE(lstm_recurrence_applies(at::randn({2, 5, 3}, at::kBFloat16), weights));  // cast to the weights'
  EXPECT_FALSE(lstm_recurrence_applies(at::randn({2, 0, 3}), weights));
  const LstmWeights bf16{weights.w_ih.to(at::kBFloat16), weights.w_hh.to(at::kBFloat16), weights.b_ih, weights.b_hh};
  EXPECT_FALSE(lstm_recurrence_applies(at::randn({2, 5, 3}), bf16));
}

}  // namespace
}  // namespace mixseq
