// nn/gru_recurrence.h against LibTorch's own GRU: bidirectional over packed input of unequal
// lengths (frames past a length are 0, the backward direction starts at each utterance's last
// frame), equal lengths, one direction; its gradients against LibTorch's and against finite
// differences; and what it refuses.
#include "mixseq/nn/gru_recurrence.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/utils/rnn.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/utils.h>

#include <vector>

#include "gradient_check.h"
#include "mixseq/nn/packed_bf16_matrix.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

// A layer's weights as models/deepspeech2.cpp takes them: all_weights() lists w_ih, w_hh, b_ih
// and b_hh of each direction, forward first.
std::vector<GruWeights> weights_of(torch::nn::GRU& gru, bool bidirectional) {
  const auto w = gru->all_weights();
  EXPECT_EQ(w.size(), bidirectional ? 8u : 4u);
  auto p = gru->named_parameters();
  EXPECT_TRUE(w[1].is_same(p["weight_hh_l0"]) && w[2].is_same(p["bias_ih_l0"]));
  std::vector<GruWeights> result;
  for (size_t d = 0; d + 3 < w.size(); d += 4) result.push_back({w[d], w[d + 1], w[d + 2], w[d + 3]});
  return result;
}

double gru_relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(1e-30, b.abs().max().item<double>());
}

TEST(GruRecurrence, InferenceEqualsLibTorchsGruOverPackedInput) {
  torch::manual_seed(7);
  for (const bool bidirectional : {true, false}) {
    const int64_t steps = 23, batch = 5, in = 19, hidden = 37;
    torch::nn::GRU gru(torch::nn::GRUOptions(in, hidden).bidirectional(bidirectional));
    const auto x = torch::randn({steps, batch, in});
    const auto lengths = torch::tensor({23, 9, 1, 17, 23}, torch::kLong);
    torch::NoGradGuard no_grad;
    auto packed = torch::nn::utils::rnn::pack_padded_sequence(x, lengths, false, false);
    const auto expected = std::get<0>(torch::nn::utils::rnn::pad_packed_sequence(
        std::get<0>(gru->forward_with_packed_input(packed)), false, 0.0, steps));
    const auto weights = weights_of(gru, bidirectional);
    ASSERT_TRUE(gru_recurrence_applies(x, weights));
    const auto y = gru_recurrence(x, lengths, weights);
    ASSERT_EQ(y.sizes(), expected.sizes());
    EXPECT_LT(gru_relative_error(y, expected), 1e-5) << bidirectional;
    // equal lengths: the unpacked run
    const auto full = gru_recurrence(x, torch::full({batch}, steps, torch::kLong), weights);
    EXPECT_LT(gru_relative_error(full, std::get<0>(gru->forward(x))), 1e-5) << bidirectional;
  }
}

// The padded output of LibTorch's GRU over packed input: the reference for values and gradients.
torch::Tensor packed_gru(torch::nn::GRU& gru, const torch::Tensor& x, const torch::Tensor& lengths) {
  auto packed = torch::nn::utils::rnn::pack_padded_sequence(x, lengths, false, false);
  return std::get<0>(torch::nn::utils::rnn::pad_packed_sequence(std::get<0>(gru->forward_with_packed_input(packed)),
                                                                 false, 0.0, x.size(0)));
}

TEST(GruRecurrence, GradientsEqualLibTorchsOverPackedInput) {
  torch::manual_seed(11);
  for (const bool bidirectional : {true, false}) {
    // H 37: gate blocks that are not vector-aligned; lengths 1 and T at either end of the batch
    const int64_t steps = 13, batch = 4, in = 7, hidden = 37;
    torch::nn::GRU gru(torch::nn::GRUOptions(in, hidden).bidirectional(bidirectional));
    {
      torch::NoGradGuard no_grad;
      for (auto& p : gru->parameters()) p.uniform_(-0.6, 0.6);  // gates away from their linear range
    }
    const auto x = torch::randn({steps, batch, in}).requires_grad_();
    const auto lengths = torch::tensor({13, 6, 1, 10}, torch::kLong);
    const auto weights = weights_of(gru, bidirectional);
    const auto probe = torch::randn({steps, batch, (bidirectional ? 2 : 1) * hidden});
    std::vector<torch::Tensor> inputs{x};
    for (const auto& w : weights) inputs.insert(inputs.end(), {w.w_ih, w.w_hh, w.b_ih, w.b_hh});

    ASSERT_TRUE(gru_recurrence_applies(x, weights));
    const auto y = gru_recurrence(x, lengths, weights);
    const auto ours = torch::autograd::grad({(y * probe).sum()}, inputs);
    const auto y_ref = packed_gru(gru, x, lengths);
    const auto theirs = torch::autograd::grad({(y_ref * probe).sum()}, inputs);

    EXPECT_LT(gru_relative_error(y, y_ref), 1e-5) << bidirectional;
    const char* names[] = {"x", "w_ih", "w_hh", "b_ih", "b_hh"};
    for (size_t i = 0; i < ours.size(); ++i) {
      ASSERT_TRUE(ours[i].defined()) << i;
      EXPECT_LT(gru_relative_error(ours[i], theirs[i]), 1e-5) << bidirectional << " " << names[i == 0 ? 0 : 1 + (i - 1) % 4]
                                                        << " of direction " << (i == 0 ? 0 : (i - 1) / 4);
    }
    // Frames past a length get no gradient.
    EXPECT_EQ(ours[0].select(0, 12).select(0, 1).abs().max().item<float>(), 0.0f);
  }
}

TEST(GruRecurrence, GradientsMatchFiniteDifferences) {
  torch::manual_seed(12);
  const auto opts = torch::TensorOptions().dtype(torch::kDouble);
  const int64_t steps = 4, batch = 2, in = 3, hidden = 2;
  std::vector<GruWeights> w;
  std::vector<test::NamedTensor> named;
  const auto x = torch::randn({steps, batch, in}, opts).requires_grad_();
  named.push_back({"x", x});
  for (int d = 0; d < 2; ++d) {
    w.push_back({torch::randn({3 * hidden, in}, opts).requires_grad_(),
                 torch::randn({3 * hidden, hidden}, opts).requires_grad_(),
                 torch::randn({3 * hidden}, opts).requires_grad_(), torch::randn({3 * hidden}, opts).requires_grad_()});
    const std::string suffix = d == 0 ? "" : " (backward direction)";
    named.insert(named.end(), {{"w_ih" + suffix, w[d].w_ih}, {"w_hh" + suffix, w[d].w_hh},
                               {"b_ih" + suffix, w[d].b_ih}, {"b_hh" + suffix, w[d].b_hh}});
  }
  const auto lengths = torch::tensor({4, 3}, torch::kLong);
  const auto probe = torch::randn({steps, batch, 2 * hidden}, opts);
  test::expect_gradients_match_finite_differences([&] { return (gru_recurrence(x, lengths, w) * probe).sum(); },
                                                  named);
}

// The recurrence as nn/gru_recurrence.h computes it under bf16 autocast, one utterance, direction
// and step at a time in LibTorch's ops: the input products from x and W_ih rounded to bf16, the
// recurrent ones from h_{t-1} and W_hh rounded to bf16, sums and cell in fp32.
torch::Tensor bf16_products_reference(const torch::Tensor& x, const std::vector<int64_t>& lengths,
                                      const std::vector<GruWeights>& weights) {
  torch::NoGradGuard no_grad;
  const auto round = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat); };
  const int64_t steps = x.size(0), batch = x.size(1), hidden = weights[0].w_hh.size(1);
  auto out = torch::zeros({steps, batch, static_cast<int64_t>(weights.size()) * hidden});
  for (size_t d = 0; d < weights.size(); ++d) {
    const auto& w = weights[d];
    const auto w_ih = round(w.w_ih), w_hh = round(w.w_hh);
    for (int64_t b = 0; b < batch; ++b) {
      auto h = torch::zeros({hidden});
      for (int64_t s = 0; s < lengths[b]; ++s) {
        const int64_t t = d == 0 ? s : lengths[b] - 1 - s;  // the backward direction from the utterance's end
        const auto gi = torch::mv(w_ih, round(x[t][b])) + w.b_ih, gh = torch::mv(w_hh, round(h)) + w.b_hh;
        const auto r = torch::sigmoid(gi.narrow(0, 0, hidden) + gh.narrow(0, 0, hidden));
        const auto z = torch::sigmoid(gi.narrow(0, hidden, hidden) + gh.narrow(0, hidden, hidden));
        const auto n = torch::tanh(gi.narrow(0, 2 * hidden, hidden) + r * gh.narrow(0, 2 * hidden, hidden));
        h = (1 - z) * n + z * h;
        out[t][b].narrow(0, d * hidden, hidden).copy_(h);
      }
    }
  }
  return out;
}

// Under bf16 autocast (a bf16 forward pass of the recognizer) the products take bf16 operands
// summed in fp32, the cell runs in fp32: the output is the reference above's (and not the fp32
// recurrence's), in fp32, with autocast on again afterwards. Backward: x's gradient in x's dtype;
// every gradient that of the fp32 recurrence on x and W_ih rounded to bf16, up to bf16's rounding
// of h_{t-1}, of W_hh and of the gate gradients in the products.
// hidden 40: each step's product through oneDNN's bf16 GEMM; 64: on AMX tiles where the CPU has
// them (nn/packed_bf16_matrix.h takes W_hh's [64, 192] and [192, 64], not [40, 120]).
void expect_bf16_products(int64_t hidden) {
  torch::manual_seed(13);
  torch::nn::GRU gru(torch::nn::GRUOptions(48, hidden).bidirectional(true));
  const auto weights = weights_of(gru, true);
  const auto x = torch::randn({9, 3, 48}).to(torch::kBFloat16).requires_grad_();
  const std::vector<int64_t> lens{9, 4, 2};
  const auto lengths = torch::tensor(lens, torch::kLong);
  const auto probe = torch::randn({9, 3, 2 * hidden});
  // The fp32 recurrence on x and W_ih rounded to bf16 (W_hh and the biases as they are).
  const auto x_ref = x.detach().to(torch::kFloat).requires_grad_();
  std::vector<GruWeights> rounded;
  std::vector<torch::Tensor> ref_inputs{x_ref}, inputs{x};
  for (const auto& w : weights) {
    rounded.push_back({w.w_ih.detach().to(torch::kBFloat16).to(torch::kFloat).requires_grad_(),
                       w.w_hh.detach().clone().requires_grad_(), w.b_ih.detach().clone().requires_grad_(),
                       w.b_hh.detach().clone().requires_grad_()});
    const auto& r = rounded.back();
    ref_inputs.insert(ref_inputs.end(), {r.w_ih, r.w_hh, r.b_ih, r.b_hh});
    inputs.insert(inputs.end(), {w.w_ih, w.w_hh, w.b_ih, w.b_hh});
  }
  const auto y_fp32 = gru_recurrence(x_ref, lengths, rounded);
  const auto theirs = torch::autograd::grad({(y_fp32 * probe).sum()}, ref_inputs);
  const auto expected = bf16_products_reference(x.detach().to(torch::kFloat), lens, weights);

  compat::set_autocast(c10::kCPU, true, at::kBFloat16);
  const bool applies = gru_recurrence_applies(x, weights);
  const bool double_applies = gru_recurrence_applies(x.to(torch::kDouble), {{weights[0].w_ih.to(torch::kDouble),
                                                                              weights[0].w_hh.to(torch::kDouble),
                                                                              weights[0].b_ih.to(torch::kDouble),
                                                                              weights[0].b_hh.to(torch::kDouble)}});
  const auto y = gru_recurrence(x, lengths, weights);
  const bool still_on = compat::is_autocast_enabled(c10::kCPU);
  compat::set_autocast(c10::kCPU, false, at::kBFloat16);
  EXPECT_TRUE(applies);
  EXPECT_FALSE(double_applies);
  EXPECT_TRUE(still_on);
  ASSERT_EQ(y.scalar_type(), torch::kFloat);
  const double error = gru_relative_error(y, expected), from_fp32 = gru_relative_error(y, y_fp32.detach());
  // Here 1.3e-7 and 7.2e-4. The sums' order differs from the reference's (oneDNN's kernel against
  // LibTorch's mv, and per machine), so an h_t near a bf16 rounding boundary may round the other
  // way in one of them; each such flip moves the output by about 1/sqrt(H T) of what rounding
  // every h_t and W_hh does, hence the bound's room.
  EXPECT_LT(error, 2e-4) << "from fp32: " << from_fp32;
  EXPECT_GT(from_fp32, 4e-4) << "from the reference: " << error;  // h_{t-1} and W_hh were rounded

  const auto ours = torch::autograd::grad({(y * probe).sum()}, inputs);
  ASSERT_EQ(ours[0].scalar_type(), torch::kBFloat16);
  EXPECT_GT(ours[0].abs().max().item<float>(), 0.0f);
  EXPECT_LT(gru_relative_error(ours[0].to(torch::kFloat), theirs[0]), 2e-2) << "x";
  const char* names[] = {"w_ih", "w_hh", "b_ih", "b_hh"};
  for (size_t i = 1; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].scalar_type(), torch::kFloat) << i;
    EXPECT_LT(gru_relative_error(ours[i], theirs[i]), 2e-2) << names[(i - 1) % 4] << " of direction " << (i - 1) / 4;
  }
  // Frames past a length get no gradient.
  EXPECT_EQ(ours[0].select(0, 8).select(0, 1).abs().max().item<float>(), 0.0f);
}

TEST(GruRecurrence, UnderBf16AutocastTheProductsRunInBf16) { expect_bf16_products(40); }

TEST(GruRecurrence, UnderBf16AutocastTheStepProductsRunOnAmxTilesWhereTheShapeFits) {
  if (!PackedBf16Matrix::available()) GTEST_SKIP() << "this CPU (or process) cannot run AMX tiles";
  expect_bf16_products(64);
}

TEST(GruRecurrence, AppliesToOneCpuFloatDtypeWithoutAutocast) {
  torch::nn::GRU gru(torch::nn::GRUOptions(4, 3).bidirectional(true));
  const auto weights = weights_of(gru, true);
  const auto x = torch::randn({5, 2, 4});
  EXPECT_TRUE(gru_recurrence_applies(x, weights));                          // autograd on: training
  EXPECT_FALSE(gru_recurrence_applies(x.to(torch::kDouble), weights));      // dtypes differ
  EXPECT_FALSE(gru_recurrence_applies(x, {weights[0], weights[1], weights[0]}));  // three directions
  EXPECT_FALSE(gru_recurrence_applies(x.to(torch::kBFloat16), weights));          // bf16 without autocast
  EXPECT_THROW(gru_recurrence(x, torch::tensor({5, 6}, torch::kLong), weights), std::exception);  // past T
  EXPECT_THROW(gru_recurrence(x, torch::tensor({5}, torch::kLong), weights), std::exception);     // one length for 2
  EXPECT_THROW(gru_recurrence(x, torch::tensor({5, 0}, torch::kLong), weights), std::exception);  // empty utterance
  EXPECT_THROW(gru_recurrence(torch::randn({5, 2, 6}), torch::tensor({5, 5}, torch::kLong), weights), std::exception);
}

}  // namespace
}  // namespace mixseq
