#include "mixseq/nn/recurrent_linear.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/nn/matrix_vector_cell.h"
#include "mixseq/util/error.h"
#include "util/torch_compat.h"

namespace mixseq {

struct RecurrentLinear::State {
  at::Tensor weight, bias;                  // the parameters: their gradients' dtypes
  at::Tensor weight_products, bias_products;  // in the products' dtype (autocast's, else the weight's)
  // Values only (detached): x_t's history reaches the steps' nodes, which hold this state, so
  // keeping it would make a reference cycle that frees nothing, ever.
  std::vector<at::Tensor> inputs;           // x_t in the products' dtype, one per step
  std::vector<at::Tensor> output_gradients;  // g_t in the products' dtype; undefined until backward reaches t
};

namespace {

using State = RecurrentLinear::State;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What an autograd context keeps of the shared state (its saved_data holds IValues only).
struct StateCapsule : torch::CustomClassHolder {
  explicit StateCapsule(std::shared_ptr<State> s) : state(std::move(s)) {}
  std::shared_ptr<State> state;
};

void keep_state(AutogradContext* context, const std::shared_ptr<State>& state) {
  context->saved_data["state"] = c10::IValue::make_capsule(c10::make_intrusive<StateCapsule>(state));
}

std::shared_ptr<State> state_of(AutogradContext* context) {
  return c10::static_intrusive_pointer_cast<StateCapsule>(context->saved_data["state"].toCapsule())->state;
}

// gᵀ x over every step's rows, in the weight's dtype: g [N, out], x [N, in] -> [out, in]. bf16
// operands on the CPU sum into fp32 directly; otherwise the product's dtype is converted.
at::Tensor weight_gradient(const at::Tensor& g, const at::Tensor& x, const at::Tensor& weight) {
  if (g.scalar_type() == at::kBFloat16 && x.scalar_type() == at::kBFloat16 && weight.scalar_type() == at::kFloat &&
      g.device().is_cpu()) {
    auto out = at::empty({g.size(1), x.size(1)}, weight.options());
    bf16_matmul_into(g.t(), x, out, /*accumulate=*/false);
    return out;
  }
  return g.t().mm(x).to(weight.scalar_type());
}

// The weight's and bias's gradient node. Forward gives the token that every step takes; backward
// runs once every reached step has stored its g_t.
class SequenceGradient : public torch::autograd::Function<SequenceGradient> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                            std::shared_ptr<State> state) {
    keep_state(context, state);
    return at::zeros({}, weight.options());
  }

  static variable_list backward(AutogradContext* context, variable_list /*token gradient*/) {
    const auto state = state_of(context);
    std::vector<at::Tensor> g, x;
    for (size_t t = 0; t < state->inputs.size(); ++t) {
      if (!state->output_gradients[t].defined()) continue;  // a step the loss does not reach
      g.push_back(state->output_gradients[t].reshape({-1, state->output_gradients[t].size(-1)}));
      x.push_back(state->inputs[t].reshape({-1, state->inputs[t].size(-1)}));
      state->output_gradients[t] = at::Tensor();  // a second backward (retain_graph) stores them again
    }
    if (g.empty()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    const auto all_g = g.size() == 1 ? g[0] : at::cat(g);  // [N, out]
    const auto all_x = x.size() == 1 ? x[0] : at::cat(x);  // [N, in]
    at::Tensor weight_grad, bias_grad;
    if (context->needs_input_grad(0)) weight_grad = weight_gradient(all_g, all_x, state->weight);
    if (state->bias.defined() && context->needs_input_grad(1))  // (edge 1 exists only with a bias)
      bias_grad = at::sum(all_g, {0}, /*keepdim=*/false, state->bias.scalar_type());
    return {weight_grad, bias_grad, at::Tensor()};  // (the state has none)
  }
};

// One step's product. Its backward stores g_t for the gradient node and returns dL/dx_t.
class SequenceStep : public torch::autograd::Function<SequenceStep> {
 public:
  static at::Tensor forward(AutogradContext* context, const at::Tensor& x, const at::Tensor& token,
                            std::shared_ptr<State> state) {
    const auto x_products = x.to(state->weight_products.scalar_type());
    context->saved_data["step"] = static_cast<int64_t>(state->inputs.size());
    context->saved_data["x_dtype"] = x.scalar_type();
    state->inputs.push_back(x_products.detach());
    state->output_gradients.emplace_back();
    keep_state(context, state);
    return at::linear(x_products, state->weight_products, state->bias_products);
  }

  static variable_list backward(AutogradContext* context, variable_list gradients) {
    const auto state = state_of(context);
    const auto step = static_cast<size_t>(context->saved_data["step"].toInt());
    const auto g = gradients[0].to(state->weight_products.scalar_type());
    state->output_gradients[step] = g.detach();  // (a double backward's g has history too)
    at::Tensor x_grad;
    if (context->needs_input_grad(0))
      x_grad = g.matmul(state->weight_products).to(context->saved_data["x_dtype"].toScalarType());
    // The token's gradient: autograd counts it to know when every step has passed.
    return {x_grad, at::zeros({}, state->weight.options()), at::Tensor()};
  }
};

}  // namespace

RecurrentLinear::RecurrentLinear(const torch::Tensor& weight, const torch::Tensor& bias)
    : weight_(weight), bias_(bias) {
  MIXSEQ_CHECK(weight.dim() == 2, "RecurrentLinear: the weight must be [out, in], not ", weight.sizes());
  MIXSEQ_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)),
               "RecurrentLinear: the bias must be [", weight.size(0), "], not ", bias.sizes());
  const bool records =
      torch::GradMode::is_enabled() && (weight.requires_grad() || (bias.defined() && bias.requires_grad()));
  if (!records) return;
  const auto device_type = weight.device().type();
  const auto products_dtype =
      compat::is_autocast_enabled(device_type) ? compat::autocast_dtype(device_type) : weight.scalar_type();
  state_ = std::make_shared<State>();
  state_->weight = weight;
  state_->bias = bias;
  {
    torch::NoGradGuard no_grad;  // converted once per forward pass; the gradient goes to the parameters
    state_->weight_products = weight.detach().to(products_dtype);
    if (bias.defined()) state_->bias_products = bias.detach().to(products_dtype);
  }
  token_ = SequenceGradient::apply(weight, bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt, state_);
}

torch::Tensor RecurrentLinear::operator()(const torch::Tensor& x) const {
  MIXSEQ_CHECK(x.dim() >= 1 && x.size(-1) == weight_.size(1), "RecurrentLinear: the input must be [..., ",
               weight_.size(1), "], not ", x.sizes());
  if (!state_) return matrix_vector_linear(x, weight_, bias_);
  return SequenceStep::apply(x, token_, state_);
}

RecurrentLstmCell::RecurrentLstmCell(const torch::Tensor& w_ih, const torch::Tensor& w_hh, const torch::Tensor& b_ih,
                                     const torch::Tensor& b_hh)
    : input_(w_ih, b_ih), hidden_(w_hh, b_hh) {
  MIXSEQ_CHECK(w_ih.size(0) == w_hh.size(0) && w_hh.size(0) == 4 * w_hh.size(1),
               "RecurrentLstmCell: the weights must be [4H, in] and [4H, H], not ", w_ih.sizes(), " and ",
               w_hh.sizes());
}

std::tuple<torch::Tensor, torch::Tensor> RecurrentLstmCell::operator()(const torch::Tensor& x, const torch::Tensor& h,
                                                                       const torch::Tensor& c) const {
  if (!input_.records_gradient() && !hidden_.records_gradient())
    return matrix_vector_lstm_cell(x, h, c, input_.weight(), hidden_.weight(), input_.bias(), hidden_.bias());
  // LibTorch's lstm_cell on the CPU, as its composite writes it.
  const auto gates = (input_(x) + hidden_(h)).chunk(4, 1);  // i, f, g, o: [B, H] each
  const auto c_next = torch::sigmoid(gates[1]) * c + torch::sigmoid(gates[0]) * torch::tanh(gates[2]);
  const auto h_next = torch::sigmoid(gates[3]) * torch::tanh(c_next);
  return {h_next, c_next};
}

}  // namespace mixseq
