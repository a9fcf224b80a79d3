// nn/gru_inference.h against LibTorch's own GRU: bidirectional over packed input of unequal
// lengths (frames past a length are 0, the backward direction starts at each utterance's last
// frame), equal lengths, one direction; and what it refuses.
#include "mixseq/nn/gru_inference.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/utils/rnn.h>
#include <torch/utils.h>

#include <vector>

namespace mixseq {
namespace {

std::vector<GruWeights> weights_of(torch::nn::GRU& gru, bool bidirectional) {
  auto p = gru->named_parameters();
  std::vector<GruWeights> w = {{p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"]}};
  if (bidirectional)
    w.push_back({p["weight_ih_l0_reverse"], p["weight_hh_l0_reverse"], p["bias_ih_l0_reverse"], p["bias_hh_l0_reverse"]});
  return w;
}

double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(1e-30, b.abs().max().item<double>());
}

TEST(GruInference, EqualsLibTorchsGruOverPackedInput) {
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
    ASSERT_TRUE(gru_inference_applies(x, weights));
    const auto y = gru_inference(x, lengths, weights);
    ASSERT_EQ(y.sizes(), expected.sizes());
    EXPECT_LT(relative_error(y, expected), 1e-5) << bidirectional;
    // equal lengths: the unpacked run
    const auto full = gru_inference(x, torch::full({batch}, steps, torch::kLong), weights);
    EXPECT_LT(relative_error(full, std::get<0>(gru->forward(x))), 1e-5) << bidirectional;
  }
}

TEST(GruInference, AppliesOnlyWithoutAutogradInFloat) {
  torch::nn::GRU gru(torch::nn::GRUOptions(4, 3).bidirectional(true));
  const auto weights = weights_of(gru, true);
  const auto x = torch::randn({5, 2, 4});
  EXPECT_FALSE(gru_inference_applies(x, weights));  // autograd on
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(gru_inference_applies(x, weights));
  EXPECT_FALSE(gru_inference_applies(x.to(torch::kDouble), weights));
  EXPECT_THROW(gru_inference(x, torch::tensor({5, 6}, torch::kLong), weights), std::exception);  // past T
  EXPECT_THROW(gru_inference(x, torch::tensor({5}, torch::kLong), weights), std::exception);     // one length for 2
  EXPECT_THROW(gru_inference(torch::randn({5, 2, 6}), torch::tensor({5, 5}, torch::kLong), weights), std::exception);
}

}  // namespace
}  // namespace mixseq
