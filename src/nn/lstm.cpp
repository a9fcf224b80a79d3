#include "mixseq/nn/lstm.h"


#include <string>

namespace mixseq {

void init_lstm_uniform_(torch::nn::LSTMImpl& lstm, double range) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : lstm.named_parameters(/*recurse=*/false)) {
    // Names are weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0 (+ _reverse).
    if (parameter.key().rfind("bias_hh", 0) == 0)
      parameter.value().zero_();
    else
      parameter.value().uniform_(-range, range);
  }
}

torch::Tensor to_lstm_dtype(const torch::nn::LSTMImpl& lstm, const torch::Tensor& x) {
  return x.to(lstm.all_weights().front().scalar_type());
}

std::tuple<torch::Tensor, LstmState> run_lstm(torch::nn::LSTMImpl& lstm, const torch::Tensor& x,
                                              const torch::optional<LstmState>& state) {
  torch::optional<LstmState> cast_state;
  if (state)
    cast_state = LstmState(to_lstm_dtype(lstm, std::get<0>(*state)), to_lstm_dtype(lstm, std::get<1>(*state)));
  return lstm.forward(to_lstm_dtype(lstm, x), cast_state);  // [B, T, H], ([1, B, H], [1, B, H])
}

}  // namespace mixseq
