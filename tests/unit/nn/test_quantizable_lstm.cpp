#include "mixseq/nn/quantizable_lstm.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace mixseq {
namespace {

constexpr int64_t kLstmInput = 5, kLstmHidden = 6;

// In float the layer runs nn/lstm_recurrence.h (test_lstm_recurrence.cpp compares it with
// LibTorch's LSTM in depth); here: same parameters, same function.
TEST(QuantizableLstm, FloatIsTorchLstm) {
  at::manual_seed(11);
  torch::nn::LSTM reference(torch::nn::LSTMOptions(kLstmInput, kLstmHidden).batch_first(true));
  at::manual_seed(11);
  QuantizableLstm lstm(kLstmInput, kLstmHidden);
  ASSERT_EQ(lstm->named_parameters().keys(), reference->named_parameters().keys());  // the products add none
  for (const auto& parameter : reference->named_parameters())
    EXPECT_TRUE(at::equal(lstm->named_parameters()[parameter.key()], parameter.value())) << parameter.key();
  const auto x = at::randn({3, 4, kLstmInput});
  const LstmState state(at::randn({1, 3, kLstmHidden}), at::randn({1, 3, kLstmHidden}));
  const auto [y, s] = lstm->forward(x, state);
  const auto [y_ref, s_ref] = run_lstm(*reference, x, state);
  EXPECT_TRUE(at::allclose(y, y_ref, 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(std::get<0>(s), std::get<0>(s_ref), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(std::get<1>(s), std::get<1>(s_ref), 1e-5, 1e-6));
}

QuantizableLinearImpl& product(QuantizableLstm& lstm, const std::string& name) {
  return *std::dynamic_pointer_cast<QuantizableLinearImpl>(lstm->named_children()[name]);
}

TEST(QuantizableLstm, StepByStepProductsMatchTheFusedLstm) {
  at::manual_seed(12);
  QuantizableLstm lstm(kLstmInput, kLstmHidden);
  const auto x = at::randn({3, 4, kLstmInput});
  torch::NoGradGuard no_grad;
  const auto [fused, fused_state] = lstm->forward(x, torch::nullopt);
  int64_t hidden_calls = 0;
  product(lstm, "hidden_product").set_observer([&](const torch::Tensor&, const torch::Tensor&) { ++hidden_calls; });
  const auto [stepped, stepped_state] = lstm->forward(x, torch::nullopt);  // observed: the loop runs
  EXPECT_EQ(hidden_calls, 4);                                              // one hidden product per step
  EXPECT_TRUE(at::allclose(stepped, fused, 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(std::get<1>(stepped_state), std::get<1>(fused_state), 1e-5, 1e-6));
  // The products share the LSTM's weights, not copies of them.
  EXPECT_EQ(product(lstm, "input_product").weight.data_ptr(), lstm->named_parameters()["weight_ih_l0"].data_ptr());
}

TEST(QuantizableLstm, SimulatedProductsChangeTheOutputByLittle) {
  at::manual_seed(13);
  QuantizableLstm lstm(kLstmInput, kLstmHidden);
  const auto x = at::randn({3, 4, kLstmInput});
  torch::NoGradGuard no_grad;
  const auto reference = std::get<0>(lstm->forward(x, torch::nullopt));
  for (const char* name : {"input_product", "hidden_product"}) {
    auto& linear = product(lstm, name);
    LinearQuantization q;
    q.precision = LinearPrecision::kSimulated;
    q.weight = make_quantization_grid(linear.weight.min(), linear.weight.max(), 8, true);
    q.input = make_quantization_grid(at::scalar_tensor(-3.0), at::scalar_tensor(3.0), 8, false);
    q.output = make_quantization_grid(at::scalar_tensor(-4.0), at::scalar_tensor(4.0), 8, false);
    linear.set_quantization(q);
  }
  const auto simulated = std::get<0>(lstm->forward(x, torch::nullopt));
  const double difference = (simulated - reference).abs().max().item<double>();
  EXPECT_GT(difference, 0.0);
  EXPECT_LT(difference, 0.05);
}

}  // namespace
}  // namespace mixseq
