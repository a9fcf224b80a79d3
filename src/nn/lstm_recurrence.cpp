#include "mixseq/nn/lstm_recurrence.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "mixseq/nn/vectorized_tanh.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

struct Sizes {
  int64_t batch, steps, input, hidden;  // B, T, Din, H
};

inline void tanh_in_place(float* x, int64_t n) { vectorized_tanh_in_place(x, n); }
inline void tanh_in_place(double* x, int64_t n) {  // gradient checks
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

// Sentences per parallel task in a step's cell arithmetic: a few thousand elements each.
int64_t rows_per_task(const Sizes& n) { return std::max<int64_t>(1, 16384 / (4 * n.hidden)); }

// out = a b with b in the products' dtype (the cell's, or bf16 under autocast), out in the cell's.
void product_into(at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  if (b.scalar_type() == out.scalar_type()) {
    at::mm_out(out, a, b);
  } else {
    out.copy_(at::mm(a.to(b.scalar_type()), b));
  }
}

// The raw tensors of one forward pass, batch-first: gates [B, T, 4H] (pre-activations from x on
// entry, activated i, f, g, o on return), cells and cell_tanh [B, T, H], output [B, T, H].
template <typename scalar_t>
void recurrence_forward(const at::Tensor& h0, const at::Tensor& c0, const at::Tensor& w_hh, const Sizes& n,
                        at::Tensor& gates, at::Tensor& cells, at::Tensor& cell_tanh, at::Tensor& output) {
  const int64_t B = n.batch, T = n.steps, H = n.hidden;
  auto hidden_gates = at::empty({B, 4 * H}, gates.options());  // in the cell's dtype
  scalar_t* g_all = gates.data_ptr<scalar_t>();
  scalar_t* c_all = cells.data_ptr<scalar_t>();
  scalar_t* tc_all = cell_tanh.data_ptr<scalar_t>();
  scalar_t* h_all = output.data_ptr<scalar_t>();
  const scalar_t* c_first = c0.data_ptr<scalar_t>();
  const scalar_t* hg = hidden_gates.data_ptr<scalar_t>();
  const auto w_hh_t = w_hh.t();
  for (int64_t t = 0; t < T; ++t) {
    product_into(hidden_gates, t == 0 ? h0 : output.select(1, t - 1), w_hh_t);
    at::parallel_for(0, B, rows_per_task(n), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        scalar_t* g = g_all + (b * T + t) * 4 * H;
        const scalar_t* hg_row = hg + b * 4 * H;
        // σ(x) = (1 + tanh(x / 2)) / 2 for i, f and o; tanh for g: one tanh pass over all four.
        for (int64_t j = 0; j < 4 * H; ++j) g[j] += hg_row[j];
        for (int64_t j = 0; j < 2 * H; ++j) g[j] *= scalar_t(0.5);
        for (int64_t j = 3 * H; j < 4 * H; ++j) g[j] *= scalar_t(0.5);
        tanh_in_place(g, 4 * H);
        for (int64_t j = 0; j < 2 * H; ++j) g[j] = scalar_t(0.5) + scalar_t(0.5) * g[j];
        for (int64_t j = 3 * H; j < 4 * H; ++j) g[j] = scalar_t(0.5) + scalar_t(0.5) * g[j];
        const scalar_t* c_prev = t == 0 ? c_first + b * H : c_all + (b * T + t - 1) * H;
        scalar_t* c = c_all + (b * T + t) * H;
        scalar_t* tc = tc_all + (b * T + t) * H;
        for (int64_t j = 0; j < H; ++j) tc[j] = c[j] = g[H + j] * c_prev[j] + g[j] * g[2 * H + j];
        tanh_in_place(tc, H);
        scalar_t* h = h_all + (b * T + t) * H;
        for (int64_t j = 0; j < H; ++j) h[j] = g[3 * H + j] * tc[j];
      }
    });
  }
}

struct Forward {
  at::Tensor gates, cells, cell_tanh, output;
};

// x [B, T, Din] in the products' dtype, h0 and c0 in the cell's; `w` with its matrices in the
// products' dtype and its biases in the cell's.
Forward run_forward(const at::Tensor& x, const at::Tensor& h0, const at::Tensor& c0, const LstmWeights& w) {
  const Sizes n{x.size(0), x.size(1), x.size(2), w.w_hh.size(1)};
  const auto cell_dtype = h0.scalar_type();
  Forward f;
  // x W_ihᵀ + b_ih + b_hh for all steps at once.
  const auto x2 = x.reshape({n.batch * n.steps, n.input});
  f.gates = x.scalar_type() == cell_dtype ? at::addmm(w.b_ih + w.b_hh, x2, w.w_ih.t())
                                          : at::mm(x2, w.w_ih.t()).to(cell_dtype).add_(w.b_ih + w.b_hh);
  f.gates = f.gates.view({n.batch, n.steps, 4 * n.hidden});
  f.cells = at::empty({n.batch, n.steps, n.hidden}, h0.options());
  f.cell_tanh = at::empty_like(f.cells);
  f.output = at::empty_like(f.cells);
  AT_DISPATCH_FLOATING_TYPES(cell_dtype, "mixseq::lstm_recurrence", [&] {
    recurrence_forward<scalar_t>(h0, c0, w.w_hh, n, f.gates, f.cells, f.cell_tanh, f.output);
  });
  return f;
}

// dgates [B, T, 4H] (pre-activation gradients) from the output's and final state's gradients;
// returns dh_0 and dc_0.
template <typename scalar_t>
std::pair<at::Tensor, at::Tensor> recurrence_backward(const Forward& f, const at::Tensor& c0, const at::Tensor& w_hh,
                                                      const at::Tensor& grad_output, at::Tensor dh, at::Tensor dc,
                                                      const Sizes& n, at::Tensor& dgates) {
  const int64_t B = n.batch, T = n.steps, H = n.hidden;
  const scalar_t* g_all = f.gates.data_ptr<scalar_t>();
  const scalar_t* c_all = f.cells.data_ptr<scalar_t>();
  const scalar_t* tc_all = f.cell_tanh.data_ptr<scalar_t>();
  const scalar_t* c_first = c0.data_ptr<scalar_t>();
  const scalar_t* dout = grad_output.defined() ? grad_output.data_ptr<scalar_t>() : nullptr;
  scalar_t* dg_all = dgates.data_ptr<scalar_t>();
  scalar_t* dh_next = dh.data_ptr<scalar_t>();  // dL/dh_t through h_{t+1}: dgates_{t+1} W_hh
  scalar_t* dc_next = dc.data_ptr<scalar_t>();  // dL/dc_t through c_{t+1}
  for (int64_t t = T - 1; t >= 0; --t) {
    at::parallel_for(0, B, rows_per_task(n), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const scalar_t* g = g_all + (b * T + t) * 4 * H;
        const scalar_t* tc = tc_all + (b * T + t) * H;
        const scalar_t* c_prev = t == 0 ? c_first + b * H : c_all + (b * T + t - 1) * H;
        const scalar_t* dout_row = dout ? dout + (b * T + t) * H : nullptr;
        scalar_t* dg = dg_all + (b * T + t) * 4 * H;
        scalar_t* dh_row = dh_next + b * H;
        scalar_t* dc_row = dc_next + b * H;
        for (int64_t j = 0; j < H; ++j) {
          const scalar_t i = g[j], fg = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];
          const scalar_t dh_t = dh_row[j] + (dout_row ? dout_row[j] : scalar_t(0));
          const scalar_t dc_t = dc_row[j] + dh_t * o * (1 - tc[j] * tc[j]);
          dg[j] = dc_t * gg * i * (1 - i);
          dg[H + j] = dc_t * c_prev[j] * fg * (1 - fg);
          dg[2 * H + j] = dc_t * i * (1 - gg * gg);
          dg[3 * H + j] = dh_t * tc[j] * o * (1 - o);
          dc_row[j] = dc_t * fg;
        }
      }
    });
    product_into(dh, dgates.select(1, t), w_hh);  // dL/dh_{t-1} through gates_t
  }
  return {dh, dc};
}

// The products' dtype: autocast's lower precision under it, else the weights' (the cell's).
at::ScalarType products_dtype(at::ScalarType cell_dtype) {
  return compat::is_autocast_enabled(c10::kCPU) ? compat::autocast_dtype(c10::kCPU) : cell_dtype;
}

// A weight matrix in the products' dtype, for decoding: under autocast through its cache, so
// that each step does not convert the weights again (autocast drops the cache when it ends,
// util/mixed_precision.cpp, before an optimizer step can change them). Not for training: a cast
// cached here, without autograd, would cut the weight's gradient for a later user of the cache.
at::Tensor in_products_cached(const at::Tensor& weight, at::ScalarType product_dtype) {
  if (weight.scalar_type() == product_dtype) return weight;
  return at::autocast::cached_cast(product_dtype, weight, c10::kCPU);
}

class LstmRecurrence : public torch::autograd::Function<LstmRecurrence> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* context, const at::Tensor& x,
                                                const at::Tensor& h0, const at::Tensor& c0, const at::Tensor& w_ih,
                                                const at::Tensor& w_hh, const at::Tensor& b_ih,
                                                const at::Tensor& b_hh) {
    const auto cell_dtype = w_hh.scalar_type(), product_dtype = products_dtype(cell_dtype);
    const auto input = x.to(product_dtype).contiguous();
    const auto h_first = h0.to(cell_dtype).contiguous(), c_first = c0.to(cell_dtype).contiguous();
    const LstmWeights weights{w_ih.to(product_dtype), w_hh.to(product_dtype), b_ih, b_hh};
    auto f = run_forward(input, h_first, c_first, weights);
    context->save_for_backward(
        {input, h_first, c_first, weights.w_ih, weights.w_hh, f.gates, f.cells, f.cell_tanh, f.output});
    for (const auto& [name, tensor] : {std::pair{"x", x}, std::pair{"h0", h0}, std::pair{"c0", c0}})
      context->saved_data[std::string(name) + "_dtype"] = tensor.scalar_type();
    const int64_t T = input.size(1);
    // The final state as tensors of their own: outputs that view one another confuse autograd.
    return {f.output, f.output.select(1, T - 1).clone(), f.cells.select(1, T - 1).clone()};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &x = saved[0], &h0 = saved[1], &c0 = saved[2], &w_ih = saved[3], &w_hh = saved[4];
    const Forward f{saved[5], saved[6], saved[7], saved[8]};
    const Sizes n{x.size(0), x.size(1), x.size(2), w_hh.size(1)};
    const auto cell_dtype = h0.scalar_type(), product_dtype = w_hh.scalar_type();
    const auto dtype_of = [&](const char* name) { return context->saved_data[name].toScalarType(); };
    const auto grad_output = gradients[0].defined() ? gradients[0].to(cell_dtype).contiguous() : at::Tensor();
    auto dh = gradients[1].defined() ? gradients[1].to(cell_dtype).clone(at::MemoryFormat::Contiguous)
                                     : at::zeros_like(h0);
    auto dc = gradients[2].defined() ? gradients[2].to(cell_dtype).clone(at::MemoryFormat::Contiguous)
                                     : at::zeros_like(c0);
    auto dgates = at::empty_like(f.gates);
    AT_DISPATCH_FLOATING_TYPES(cell_dtype, "mixseq::lstm_recurrence_backward", [&] {
      std::tie(dh, dc) = recurrence_backward<scalar_t>(f, c0, w_hh, grad_output, dh, dc, n, dgates);
    });
    // Each weight's gradient in one product over all B·T positions.
    const auto dg = dgates.view({n.batch * n.steps, 4 * n.hidden});
    const auto dg_products = dg.to(product_dtype);
    const auto h_prev = at::cat({h0.unsqueeze(1), f.output.slice(1, 0, n.steps - 1)}, 1)
                            .view({n.batch * n.steps, n.hidden})
                            .to(product_dtype);  // h_{t-1} at every position
    const auto grad_bias = dg.sum(0);
    return {dg_products.mm(w_ih).view({n.batch, n.steps, n.input}).to(dtype_of("x_dtype")),
            dh.to(dtype_of("h0_dtype")),
            dc.to(dtype_of("c0_dtype")),
            dg_products.t().mm(x.view({n.batch * n.steps, n.input})).to(cell_dtype),
            dg_products.t().mm(h_prev).to(cell_dtype),
            grad_bias,
            grad_bias};
  }
};

}  // namespace

bool lstm_recurrence_applies(const torch::Tensor& x, const LstmWeights& weights) {
  const auto cell_dtype = weights.w_hh.scalar_type();
  if (!x.device().is_cpu() || x.dim() != 3 || x.size(1) == 0 || !at::isFloatingType(x.scalar_type()) ||
      weights.w_ih.scalar_type() != cell_dtype || (cell_dtype != at::kFloat && cell_dtype != at::kDouble))
    return false;
  const auto product_dtype = products_dtype(cell_dtype);
  return product_dtype == cell_dtype || (product_dtype == at::kBFloat16 && cell_dtype == at::kFloat);
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> lstm_recurrence(const torch::Tensor& x, const torch::Tensor& h0,
                                                                        const torch::Tensor& c0,
                                                                        const LstmWeights& weights) {
  const bool needs_graph = at::GradMode::is_enabled() &&
                           (x.requires_grad() || h0.requires_grad() || c0.requires_grad() ||
                            weights.w_ih.requires_grad() || weights.w_hh.requires_grad() ||
                            weights.b_ih.requires_grad() || weights.b_hh.requires_grad());
  if (!needs_graph) {  // decoding: nothing kept for backward
    const auto cell_dtype = weights.w_hh.scalar_type(), product_dtype = products_dtype(cell_dtype);
    const auto f = run_forward(x.to(product_dtype).contiguous(), h0.to(cell_dtype).contiguous(),
                               c0.to(cell_dtype).contiguous(),
                               {in_products_cached(weights.w_ih, product_dtype),
                                in_products_cached(weights.w_hh, product_dtype),
                                weights.b_ih, weights.b_hh});
    const int64_t T = x.size(1);
    return {f.output, f.output.select(1, T - 1), f.cells.select(1, T - 1)};
  }
  auto outputs = LstmRecurrence::apply(x, h0, c0, weights.w_ih, weights.w_hh, weights.b_ih, weights.b_hh);
  return {outputs[0], outputs[1], outputs[2]};
}

}  // namespace mixseq
