// BidirectionalLstm, ResidualLstmStack and the LSTM helpers they share.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/utils/rnn.h>

#include "gradient_check.h"
#include "mixseq/nn/bidirectional_lstm.h"
#include "mixseq/nn/lstm.h"
#include "mixseq/nn/padding_mask.h"
#include "mixseq/nn/residual_lstm_stack.h"

namespace mixseq {
namespace {

constexpr int64_t kInput = 5, kHidden = 4, kExtra = 3;

ResidualLstmStackOptions stack_options(int64_t num_layers, int64_t extra_input_size) {
  ResidualLstmStackOptions options;
  options.input_size = kInput;
  options.hidden_size = kHidden;
  options.num_layers = num_layers;
  options.extra_input_size = extra_input_size;
  options.init_range = 0.5;
  return options;
}

TEST(LstmHelpers, InitLstmUniformZeroesOnlyHiddenHiddenBiases) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(kInput, kHidden).bidirectional(true));
  init_lstm_uniform_(*lstm, 0.3);
  int zeroed = 0;
  for (const auto& p : lstm->named_parameters()) {
    const bool hidden_bias = p.key().rfind("bias_hh", 0) == 0;
    zeroed += hidden_bias;
    if (hidden_bias) {
      EXPECT_TRUE(at::equal(p.value(), at::zeros_like(p.value()))) << p.key();
    } else {
      EXPECT_LE(p.value().abs().max().item<double>(), 0.3) << p.key();
      EXPECT_GT(p.value().abs().max().item<double>(), 0.15) << p.key();
    }
  }
  EXPECT_EQ(zeroed, 2);  // bias_hh_l0 and bias_hh_l0_reverse
}

TEST(LstmHelpers, RunLstmAcceptsLowerPrecisionInput) {
  // What autocast hands an LSTM: bf16 activations, fp32 weights. Plain LibTorch rejects it.
  at::manual_seed(1);
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(kInput, kHidden).batch_first(true));
  const auto x = at::randn({2, 3, kInput}).to(at::kBFloat16);
  EXPECT_ANY_THROW(lstm->forward(x));
  const auto [output, state] = run_lstm(*lstm, x, torch::nullopt);
  EXPECT_EQ(output.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(output, std::get<0>(lstm->forward(x.to(at::kFloat)))));
}

TEST(BidirectionalLstm, SentenceAloneEqualsSentenceInPaddedBatch) {
  at::manual_seed(2);
  BidirectionalLstm lstm(BidirectionalLstmOptions{kInput, kHidden, 0.5});
  const auto lengths = at::tensor({3, 6, 1, 4}, at::kLong);  // not sorted: the block sorts
  const auto x = at::randn({4, 6, kInput});
  const auto output = lstm(x, lengths);  // [4, 6, 2H]
  ASSERT_EQ(output.sizes(), (at::IntArrayRef{4, 6, 2 * kHidden}));
  for (int64_t i = 0; i < 4; ++i) {
    const int64_t length = lengths[i].item<int64_t>();
    const auto alone = lstm(x.slice(0, i, i + 1).slice(1, 0, length), lengths.slice(0, i, i + 1));  // [1, length, 2H]
    EXPECT_TRUE(at::allclose(output[i].slice(0, 0, length), alone[0], 1e-6, 1e-6)) << "row " << i;
    EXPECT_TRUE(at::equal(output[i].slice(0, length), at::zeros({6 - length, 2 * kHidden}))) << "row " << i;
  }
  // The padding really is there to be ignored: garbage in it changes nothing.
  const auto noisy = x + 100 * padding_mask(lengths, 6).unsqueeze(-1).to(at::kFloat);  // [4, 6, 1]
  EXPECT_TRUE(at::allclose(lstm(noisy, lengths), output, 1e-6, 1e-6));
}

// In float on the CPU the layer runs each direction through nn/lstm_recurrence.h over sentences
// reversed within their lengths; LibTorch's packed bidirectional LSTM with the same parameters
// is the reference, for the outputs and for every gradient.
TEST(BidirectionalLstm, RecurrenceEqualsLibTorchsPackedLstmWithGradients) {
  at::manual_seed(5);
  BidirectionalLstm lstm(BidirectionalLstmOptions{kInput, kHidden, 0.5});
  torch::nn::LSTM reference(torch::nn::LSTMOptions(kInput, kHidden).batch_first(true).bidirectional(true));
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : reference->named_parameters()) p.value().copy_(lstm->named_parameters()["lstm." + p.key()]);
  }
  const auto lengths = at::tensor({3, 6, 1, 4}, at::kLong);
  const auto x = at::randn({4, 6, kInput}).requires_grad_();
  const auto weighting = at::randn({4, 6, 2 * kHidden});
  const auto output = lstm(x, lengths);
  namespace rnn = torch::nn::utils::rnn;
  const auto packed = rnn::pack_padded_sequence(x, lengths, /*batch_first=*/true, /*enforce_sorted=*/false);
  const auto expected = std::get<0>(rnn::pad_packed_sequence(std::get<0>(reference->forward_with_packed_input(packed)),
                                                             /*batch_first=*/true, 0.0, /*total_length=*/6));
  EXPECT_TRUE(at::allclose(output, expected, 1e-5, 1e-6)) << (output - expected).abs().max();
  (output * weighting).sum().backward();
  const auto ours = x.grad().clone();
  x.mutable_grad().zero_();
  (expected * weighting).sum().backward();
  EXPECT_TRUE(at::allclose(ours, x.grad(), 1e-4, 1e-5)) << (ours - x.grad()).abs().max();
  for (const auto& p : reference->named_parameters()) {
    const auto& grad = lstm->named_parameters()["lstm." + p.key()].grad();
    EXPECT_TRUE(at::allclose(grad, p.value().grad(), 1e-4, 1e-5)) << p.key() << ": " << (grad - p.value().grad()).abs().max();
  }
}

TEST(BidirectionalLstm, KeepsTheSourceLengthWhenAllSentencesAreShorter) {
  BidirectionalLstm lstm(BidirectionalLstmOptions{kInput, kHidden, 0.5});
  EXPECT_EQ(lstm(at::randn({2, 5, kInput}), at::tensor({2, 3}, at::kLong)).size(1), 5);
}

TEST(BidirectionalLstm, GradientsMatchFiniteDifferences) {
  at::manual_seed(3);
  BidirectionalLstm lstm(BidirectionalLstmOptions{kInput, kHidden, 0.5});
  lstm->to(at::kDouble);
  const auto options = at::TensorOptions().dtype(at::kDouble);
  const auto x = at::randn({3, 4, kInput}, options).requires_grad_();
  const auto lengths = at::tensor({2, 4, 3}, at::kLong);
  const auto weighting = at::randn({3, 4, 2 * kHidden}, options);
  std::vector<test::NamedTensor> inputs = {{"x", x}};
  for (const auto& p : lstm->named_parameters()) inputs.push_back({p.key(), p.value()});
  test::expect_gradients_match_finite_differences([&] { return (lstm(x, lengths) * weighting).sum(); }, inputs);
}

TEST(ResidualLstmStack, WiresLayersResidualsAndExtraInput) {
  at::manual_seed(4);
  ResidualLstmStack stack(stack_options(3, kExtra));
  stack->eval();
  const auto x = at::randn({2, 5, kInput});
  const auto extra = at::randn({2, 5, kExtra});
  const auto [output, states] = stack->forward(x, extra);
  ASSERT_EQ(states.size(), 3u);

  // The same computation spelled out with the stack's own LSTMs.
  const auto children = stack->named_children();
  const auto layer = [&](int i, const torch::Tensor& input) {
    auto& lstm = *children["layers"]->children()[i]->as<torch::nn::LSTM>();
    return std::get<0>(lstm.forward(at::cat({input, extra}, -1)));
  };
  const auto h1 = layer(0, x);
  const auto h2 = layer(1, h1) + h1;
  const auto h3 = layer(2, h2) + h2;
  EXPECT_TRUE(at::allclose(output, h3, 1e-6, 1e-6));
}

TEST(ResidualLstmStack, ContinuesFromReturnedStates) {
  // Running a sequence in two parts, the second from the states the first returned, is
  // running it at once: what incremental decoding relies on.
  at::manual_seed(5);
  ResidualLstmStack stack(stack_options(3, kExtra));
  stack->eval();
  const auto x = at::randn({2, 6, kInput});
  const auto extra = at::randn({2, 6, kExtra});
  const auto [whole, whole_states] = stack->forward(x, extra);
  const auto [first, first_states] = stack->forward(x.slice(1, 0, 4), extra.slice(1, 0, 4));
  const auto [second, second_states] = stack->forward(x.slice(1, 4), extra.slice(1, 4), first_states);
  EXPECT_TRUE(at::allclose(at::cat({first, second}, 1), whole, 1e-5, 1e-6));
  for (size_t i = 0; i < whole_states.size(); ++i) {
    EXPECT_TRUE(at::allclose(std::get<0>(second_states[i]), std::get<0>(whole_states[i]), 1e-5, 1e-6));
    EXPECT_TRUE(at::allclose(std::get<1>(second_states[i]), std::get<1>(whole_states[i]), 1e-5, 1e-6));
  }
}

TEST(ResidualLstmStack, DropoutOnlyInTraining) {
  at::manual_seed(6);
  auto options = stack_options(2, 0);
  options.dropout = 0.5;
  ResidualLstmStack stack(options);
  const auto x = at::randn({2, 5, kInput});
  stack->train();
  EXPECT_FALSE(at::allclose(std::get<0>(stack->forward(x)), std::get<0>(stack->forward(x))));
  stack->eval();
  EXPECT_TRUE(at::equal(std::get<0>(stack->forward(x)), std::get<0>(stack->forward(x))));
}

TEST(ResidualLstmStack, GradientsMatchFiniteDifferences) {
  at::manual_seed(7);
  ResidualLstmStack stack(stack_options(3, kExtra));
  stack->to(at::kDouble);
  const auto options = at::TensorOptions().dtype(at::kDouble);
  const auto x = at::randn({2, 3, kInput}, options).requires_grad_();
  const auto extra = at::randn({2, 3, kExtra}, options).requires_grad_();
  std::vector<LstmState> initial;
  std::vector<test::NamedTensor> inputs = {{"x", x}, {"extra", extra}};
  for (int i = 0; i < 3; ++i) {
    initial.emplace_back(at::randn({1, 2, kHidden}, options).requires_grad_(),
                         at::randn({1, 2, kHidden}, options).requires_grad_());
    inputs.push_back({"h" + std::to_string(i), std::get<0>(initial.back())});
    inputs.push_back({"c" + std::to_string(i), std::get<1>(initial.back())});
  }
  for (const auto& p : stack->named_parameters()) inputs.push_back({p.key(), p.value()});
  const auto weighting = at::randn({2, 3, kHidden}, options);
  const auto state_weighting = at::randn({1, 2, kHidden}, options);
  test::expect_gradients_match_finite_differences(
      [&] {
        const auto [output, states] = stack->forward(x, extra, initial);
        return (output * weighting).sum() + (std::get<1>(states.back()) * state_weighting).sum();
      },
      inputs);
}

}  // namespace
}  // namespace mixseq
