#include "mixseq/nn/matrix_vector_cell.h"

#include <ATen/ATen.h>
#include <torch/torch.h>

namespace mixseq {

bool uses_matrix_vector_path(const torch::Tensor& x) {
  return x.dim() == 2 && x.size(0) == 1 && x.scalar_type() == torch::kFloat && x.device().is_cpu() &&
         !(torch::GradMode::is_enabled() && x.requires_grad());
}

torch::Tensor matrix_vector_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (!uses_matrix_vector_path(x) || weight.scalar_type() != torch::kFloat ||
      (torch::GradMode::is_enabled() && weight.requires_grad()))
    return torch::nn::functional::linear(x, weight, bias);
  const auto row = x.select(0, 0);                                    // [in]
  const auto y = bias.defined() ? torch::addmv(bias, weight, row) : torch::mv(weight, row);  // [out]
  return y.unsqueeze(0);                                              // [1, out]
}

std::tuple<torch::Tensor, torch::Tensor> matrix_vector_lstm_cell(const torch::Tensor& x, const torch::Tensor& h,
                                                                 const torch::Tensor& c, const torch::Tensor& w_ih,
                                                                 const torch::Tensor& w_hh, const torch::Tensor& b_ih,
                                                                 const torch::Tensor& b_hh) {
  const bool fast = uses_matrix_vector_path(x) && uses_matrix_vector_path(h) &&
                    !(torch::GradMode::is_enabled() && (w_ih.requires_grad() || w_hh.requires_grad()));
  if (!fast) return at::lstm_cell(x, {h, c}, w_ih, w_hh, b_ih, b_hh);
  // gates = W_ih x + b_ih + W_hh h + b_hh, two gemv calls into one vector.
  auto gates = b_ih.defined() ? torch::addmv(b_ih, w_ih, x.select(0, 0)) : torch::mv(w_ih, x.select(0, 0));  // [4H]
  gates.addmv_(w_hh, h.select(0, 0));
  if (b_hh.defined()) gates.add_(b_hh);
  const auto chunks = gates.chunk(4, 0);                            // i, f, g, o: [H] each
  const auto c_next = torch::sigmoid(chunks[1]) * c.select(0, 0) + torch::sigmoid(chunks[0]) * torch::tanh(chunks[2]);
  const auto h_next = torch::sigmoid(chunks[3]) * torch::tanh(c_next);
  return {h_next.unsqueeze(0), c_next.unsqueeze(0)};                // [1, H] each
}

}  // namespace mixseq
