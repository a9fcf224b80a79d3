#include "mixseq/nn/gru_recurrence.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "mixseq/nn/batched_matmul.h"
#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/nn/bf16_rows.h"
#include "mixseq/nn/packed_bf16_matrix.h"
#include "mixseq/nn/vectorized_tanh.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"
#include "util/torch_compat.h"
#include "util/vector_clones.h"

namespace mixseq {
namespace {

struct Sizes {
  int64_t steps, batch, input, hidden, directions;  // T, B, Din, H, D
};

inline void tanh_in_place(float* x, int64_t n) { vectorized_tanh_in_place(x, n); }
inline void tanh_in_place(double* x, int64_t n) {  // gradient checks
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

// One utterance's cell at one step, forward. gi [3H]: x W_ihᵀ + b_ih + (b_hr, b_hz, 0); gh [3H]:
// h_prev W_hhᵀ (zeros at the first step); b_hn [H]. Writes g [3H] = the activated r, z, n,
// ghn [H] = h_prev W_hnᵀ + b_hn (when kept for backward) and h [H].
template <typename scalar_t>
__attribute__((always_inline)) inline void cell_forward_row(const scalar_t* __restrict gi, const scalar_t* __restrict gh,
                                                            const scalar_t* __restrict b_hn,
                                                            const scalar_t* __restrict h_prev, scalar_t* __restrict g,
                                                            scalar_t* __restrict ghn, scalar_t* __restrict h,
                                                            int64_t H) {
  for (int64_t j = 0; j < 2 * H; ++j) g[j] = scalar_t(0.5) * (gi[j] + gh[j]);
  tanh_in_place(g, 2 * H);
  for (int64_t j = 0; j < 2 * H; ++j) g[j] = scalar_t(0.5) + scalar_t(0.5) * g[j];
  for (int64_t j = 0; j < H; ++j) {
    const scalar_t hn = gh[2 * H + j] + b_hn[j];
    if (ghn) ghn[j] = hn;
    g[2 * H + j] = gi[2 * H + j] + g[j] * hn;
  }
  tanh_in_place(g + 2 * H, H);
  for (int64_t j = 0; j < H; ++j) h[j] = g[2 * H + j] + g[H + j] * (h_prev[j] - g[2 * H + j]);
}

// One utterance's cell at one step, backward. dL/dh_t = carry (through h_{t+1}'s z path) + rec
// (dgh_{t+1} W_hh) + dout (the output's gradient). Writes the pre-activation gradients of the
// input side dgi [3H] and of the recurrent side dgh [3H] (they differ in n: dgh_n = dgi_n ⊙ r),
// and carry becomes dL/dh_{t-1} through this step's z path.
template <typename scalar_t>
__attribute__((always_inline)) inline void cell_backward_row(const scalar_t* __restrict g,
                                                             const scalar_t* __restrict ghn,
                                                             const scalar_t* __restrict h_prev,
                                                             const scalar_t* __restrict rec,
                                                             const scalar_t* __restrict dout, scalar_t* __restrict carry,
                                                             scalar_t* __restrict dgi, scalar_t* __restrict dgh,
                                                             int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    const scalar_t dh = carry[j] + rec[j] + dout[j];
    const scalar_t r = g[j], z = g[H + j], n = g[2 * H + j];
    const scalar_t dn = dh * (1 - z) * (1 - n * n);
    const scalar_t dr = dn * ghn[j] * r * (1 - r);
    const scalar_t dz = dh * (h_prev[j] - n) * z * (1 - z);
    dgi[j] = dgh[j] = dr;
    dgi[H + j] = dgh[H + j] = dz;
    dgi[2 * H + j] = dn;
    dgh[2 * H + j] = dn * r;
    carry[j] = dh * z;
  }
}

// The rows above compiled per instruction set for float (Debian's LibTorch and mixseq build for
// the x86-64 baseline); fp64 for gradient checks.
MIXSEQ_VECTOR_CLONES
void cell_forward(const float* gi, const float* gh, const float* b_hn, const float* h_prev, float* g, float* ghn,
                  float* h, int64_t H) {
  cell_forward_row(gi, gh, b_hn, h_prev, g, ghn, h, H);
}
void cell_forward(const double* gi, const double* gh, const double* b_hn, const double* h_prev, double* g,
                  double* ghn, double* h, int64_t H) {
  cell_forward_row(gi, gh, b_hn, h_prev, g, ghn, h, H);
}
MIXSEQ_VECTOR_CLONES
void cell_backward(const float* g, const float* ghn, const float* h_prev, const float* rec, const float* dout,
                   float* carry, float* dgi, float* dgh, int64_t H) {
  cell_backward_row(g, ghn, h_prev, rec, dout, carry, dgi, dgh, H);
}
void cell_backward(const double* g, const double* ghn, const double* h_prev, const double* rec, const double* dout,
                   double* carry, double* dgi, double* dgh, int64_t H) {
  cell_backward_row(g, ghn, h_prev, rec, dout, carry, dgi, dgh, H);
}

// How a step's product c = a b runs on the calling thread (a direction's own): oneDNN's sgemm
// for fp32 where the process has it (nn/bf16_matmul.h: [8, 256] x [256, 768], DeepSpeech2's
// bench step, in about 40 us against OpenBLAS's 96 on one Zen 4 core), else one CBLAS call
// (nn/batched_matmul.h), else at::mm_out.
enum class StepProducts { kOneDnn, kBlas, kAten };

StepProducts step_products(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() == at::kFloat && float_matmul_is_direct()) return StepProducts::kOneDnn;
  return batched_matmul_in_place(a.unsqueeze(0).unsqueeze(0), b.unsqueeze(0).unsqueeze(0)) ? StepProducts::kBlas
                                                                                           : StepProducts::kAten;
}

// c = a b: 2-D views with unit column stride; c is a whole tensor.
void step_product(const at::Tensor& a, const at::Tensor& b, at::Tensor& c, StepProducts how) {
  switch (how) {
    case StepProducts::kOneDnn:
      float_matmul_into(a, b, c, /*accumulate=*/false);
      break;
    case StepProducts::kBlas:
      batched_matmul_into(a.unsqueeze(0).unsqueeze(0), b.unsqueeze(0).unsqueeze(0), c.unsqueeze(0).unsqueeze(0));
      break;
    case StepProducts::kAten:
      at::mm_out(c, a, b);
      break;
  }
}

// The time index of processing step s in direction d (0 forward, 1 backward).
inline int64_t time_of(int64_t s, int64_t d, int64_t T) { return d == 0 ? s : T - 1 - s; }

struct Forward {
  at::Tensor out;    // [T, B, D, H]: h_t, 0 past an utterance's length
  at::Tensor gates;  // [T, B, D, 3H]: the activated r, z, n (kept for backward only)
  at::Tensor ghn;    // [T, B, D, H]: h_{t-1} W_hnᵀ + b_hn (kept for backward only)
  at::Tensor out_products;  // [T, B, D, H]: out in bf16 under bf16 products, else undefined
};

// h_{t-1} W_hhᵀ (forward) or dgh_t W_hh (backward) of one direction at one step, into c [B, ·]:
// from the bf16 copies (`a_products` defined) with W_hh in bf16 (packed for AMX where `packed`
// holds it), else from a in the cell's dtype.
void recurrent_product(const at::Tensor& a, const at::Tensor& a_products, const at::Tensor& w,
                       const at::Tensor& w_products, const PackedBf16Matrix& packed, at::Tensor& c,
                       StepProducts how) {
  if (a_products.defined() && packed.rows() > 0) {
    packed.multiply_into(a_products, c);
  } else if (a_products.defined()) {
    bf16_matmul_into(a_products, w_products, c, /*accumulate=*/false);
  } else {
    step_product(a, w, c, how);
  }
}

// The recurrence over inputs [T, B, D, 3H] (input products with b_ih and b_hr, b_hz added).
// w_hh_products: each direction's W_hh in the products' dtype. Under bf16 products
// (f.out_products defined) each step's product reads h_{t-1} from the bf16 copy that the cell's
// pass writes beside h_t.
template <typename scalar_t>
void recurrence_forward(const at::Tensor& inputs, const std::vector<int64_t>& lens, const std::vector<at::Tensor>& w_hh,
                        const std::vector<at::Tensor>& w_hh_products, const std::vector<at::Tensor>& b_hn,
                        const Sizes& n, Forward& f, bool keep) {
  const int64_t T = n.steps, B = n.batch, H = n.hidden, D = n.directions, G = 3 * H;
  const scalar_t* pin = inputs.data_ptr<scalar_t>();
  scalar_t* pout = f.out.data_ptr<scalar_t>();
  scalar_t* pgates = keep ? f.gates.data_ptr<scalar_t>() : nullptr;
  scalar_t* pghn = keep ? f.ghn.data_ptr<scalar_t>() : nullptr;
  const bool low = f.out_products.defined();
  c10::BFloat16* plow = low ? f.out_products.data_ptr<c10::BFloat16>() : nullptr;
  const auto how = step_products(f.out.select(0, 0).select(1, 0), w_hh[0].t());
  at::parallel_for(0, D, 1, [&](int64_t begin, int64_t end) {
    for (int64_t d = begin; d < end; ++d) {
      const at::Tensor w_hh_t = w_hh[d].t(), w_hh_products_t = w_hh_products[d].t();  // [H, 3H]
      const auto packed = PackedBf16Matrix::where_possible(w_hh_products_t);  // bf16 products only
      const at::Tensor out_d = f.out.select(2, d);                                     // [T, B, H]
      const at::Tensor out_products_d = low ? f.out_products.select(2, d) : at::Tensor();
      const scalar_t* pb = b_hn[d].data_ptr<scalar_t>();
      at::Tensor recurrent = at::empty({B, G}, f.out.options());
      const scalar_t* pr = recurrent.data_ptr<scalar_t>();
      std::vector<scalar_t> scratch(keep ? 0 : B * G), zeros(G, scalar_t(0));
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = time_of(s, d, T), t_prev = s == 0 ? -1 : time_of(s - 1, d, T);
        if (s > 0)
          recurrent_product(out_d.select(0, t_prev), low ? out_products_d.select(0, t_prev) : at::Tensor(), w_hh_t,
                            w_hh_products_t, packed, recurrent, how);
        for (int64_t b = 0; b < B; ++b) {
          const int64_t row = (t * B + b) * D + d;
          scalar_t* h = pout + row * H;
          if (t >= lens[b]) {  // padding: output 0, and the backward direction starts afresh at the last frame
            for (int64_t j = 0; j < H; ++j) h[j] = scalar_t(0);
          } else {
            cell_forward(pin + row * G, s > 0 ? pr + b * G : zeros.data(), pb,
                         s > 0 ? pout + ((t_prev * B + b) * D + d) * H : zeros.data(),
                         keep ? pgates + row * G : scratch.data() + b * G, keep ? pghn + row * H : nullptr, h, H);
          }
          keep_for_products(h, H, low ? plow + row * H : nullptr);
        }
      }
    }
  });
}

// The products' dtype: bf16 under bf16 autocast over fp32 weights, else the weights' (the
// cell's).
at::ScalarType products_dtype(at::ScalarType cell_dtype) {
  const bool bf16 = compat::is_autocast_enabled(c10::kCPU) && compat::autocast_dtype(c10::kCPU) == at::kBFloat16 &&
                    cell_dtype == at::kFloat;
  return bf16 ? at::kBFloat16 : cell_dtype;
}

// x [T, B, Din] in the products' dtype; weights detached, in the cell's dtype, and w_ih_products
// [D 3H, Din] every direction's W_ih in the products' dtype. Returns the outputs, and what
// backward needs when `keep` (under bf16 products, the outputs' bf16 copy with them).
Forward run_forward(const at::Tensor& x, const std::vector<int64_t>& lens, const std::vector<GruWeights>& w,
                    const at::Tensor& w_ih_products, bool keep) {
  const Sizes n{x.size(0), x.size(1), x.size(2), w[0].w_hh.size(1), static_cast<int64_t>(w.size())};
  const int64_t H = n.hidden;
  std::vector<at::Tensor> bias, w_hh, w_hh_products, b_hn;
  for (const auto& d : w) {
    bias.push_back(d.b_ih + at::cat({d.b_hh.narrow(0, 0, 2 * H), at::zeros({H}, d.b_hh.options())}));
    w_hh.push_back(d.w_hh);
    w_hh_products.push_back(d.w_hh.to(x.scalar_type()));
    b_hn.push_back(d.b_hh.narrow(0, 2 * H, H).contiguous());
  }
  const auto cell = w[0].w_hh.options();
  const at::Tensor inputs = widening_matmul(x.reshape({n.steps * n.batch, n.input}), w_ih_products.t(),
                                    at::cat(bias).expand({n.steps * n.batch, -1}).contiguous());
  Forward f;
  f.out = at::empty({n.steps, n.batch, n.directions, H}, cell);
  if (keep) {
    f.gates = at::empty({n.steps, n.batch, n.directions, 3 * H}, cell);
    f.ghn = at::empty({n.steps, n.batch, n.directions, H}, cell);
  }
  if (x.scalar_type() == at::kBFloat16) f.out_products = at::empty_like(f.out, x.options());
  AT_DISPATCH_FLOATING_TYPES(cell.dtype().toScalarType(), "mixseq::gru_recurrence", [&] {
    recurrence_forward<scalar_t>(inputs, lens, w_hh, w_hh_products, b_hn, n, f, keep);
  });
  return f;
}

// dgi and dgh [T, B, D, 3H] from the output's gradient dout [T, B, D, H]. Under bf16 products
// (`dgi_products` and `dgh_products` defined, bf16 [T, B, D, 3H]) the cell's pass writes them in
// bf16 as well, the operands of each step's dgh_t W_hh and of the products after the recurrence.
template <typename scalar_t>
void recurrence_backward(const Forward& f, const at::Tensor& dout, const std::vector<int64_t>& lens,
                         const std::vector<at::Tensor>& w_hh, const std::vector<at::Tensor>& w_hh_products,
                         const Sizes& n, at::Tensor& dgi, at::Tensor& dgh, at::Tensor& dgi_products,
                         at::Tensor& dgh_products) {
  const int64_t T = n.steps, B = n.batch, H = n.hidden, D = n.directions, G = 3 * H;
  const scalar_t* pout = f.out.data_ptr<scalar_t>();
  const scalar_t* pgates = f.gates.data_ptr<scalar_t>();
  const scalar_t* pghn = f.ghn.data_ptr<scalar_t>();
  const scalar_t* pdout = dout.data_ptr<scalar_t>();
  scalar_t* pdgi = dgi.data_ptr<scalar_t>();
  scalar_t* pdgh = dgh.data_ptr<scalar_t>();
  const bool low = dgh_products.defined();
  c10::BFloat16* pdgi_low = low ? dgi_products.data_ptr<c10::BFloat16>() : nullptr;
  c10::BFloat16* pdgh_low = low ? dgh_products.data_ptr<c10::BFloat16>() : nullptr;
  const auto how = step_products(dgh.select(0, 0).select(1, 0), w_hh[0]);
  at::parallel_for(0, D, 1, [&](int64_t begin, int64_t end) {
    for (int64_t d = begin; d < end; ++d) {
      const at::Tensor dgh_d = dgh.select(2, d);  // [T, B, 3H]
      const at::Tensor dgh_products_d = low ? dgh_products.select(2, d) : at::Tensor();
      const auto packed = PackedBf16Matrix::where_possible(w_hh_products[d]);  // [3H, H], bf16 products only
      at::Tensor rec = at::zeros({B, H}, f.out.options());  // dgh_{t+1} W_hh
      scalar_t* prec = rec.data_ptr<scalar_t>();
      std::vector<scalar_t> carry(B * H, scalar_t(0)), zeros(H, scalar_t(0));
      for (int64_t s = T - 1; s >= 0; --s) {
        const int64_t t = time_of(s, d, T), t_prev = s == 0 ? -1 : time_of(s - 1, d, T);
        for (int64_t b = 0; b < B; ++b) {
          const int64_t row = (t * B + b) * D + d;
          if (t >= lens[b]) {  // the output was 0 and the state restarts: no gradient either way
            for (int64_t j = 0; j < G; ++j) pdgi[row * G + j] = pdgh[row * G + j] = scalar_t(0);
            for (int64_t j = 0; j < H; ++j) carry[b * H + j] = scalar_t(0);
          } else {
            cell_backward(pgates + row * G, pghn + row * H,
                          s > 0 ? pout + ((t_prev * B + b) * D + d) * H : zeros.data(), prec + b * H,
                          pdout + row * H, carry.data() + b * H, pdgi + row * G, pdgh + row * G, H);
          }
          keep_for_products(pdgi + row * G, G, low ? pdgi_low + row * G : nullptr);
          keep_for_products(pdgh + row * G, G, low ? pdgh_low + row * G : nullptr);
        }
        if (s > 0)
          recurrent_product(dgh_d.select(0, t), low ? dgh_products_d.select(0, t) : at::Tensor(), w_hh[d],
                            w_hh_products[d], packed, rec, how);
      }
    }
  });
}

class GruRecurrence : public torch::autograd::Function<GruRecurrence> {
 public:
  // x in the products' dtype; weights: w_ih, w_hh, b_ih, b_hh of each direction, in the cell's.
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* context, const at::Tensor& x,
                                                const at::Tensor& lengths, at::TensorList weights) {
    std::vector<GruWeights> w;  // detached: the worker threads may have autograd on
    std::vector<at::Tensor> w_ih;
    for (size_t i = 0; i + 3 < weights.size(); i += 4) {
      w.push_back({weights[i].detach(), weights[i + 1].detach(), weights[i + 2].detach(), weights[i + 3].detach()});
      w_ih.push_back(w.back().w_ih);
    }
    const std::vector<int64_t> lens(lengths.data_ptr<int64_t>(), lengths.data_ptr<int64_t>() + lengths.numel());
    const auto input = x.contiguous();
    const auto w_ih_products = at::cat(w_ih).to(input.scalar_type());
    auto f = run_forward(input, lens, w, w_ih_products, /*keep=*/true);
    std::vector<at::Tensor> saved{input, lengths, f.out, f.gates, f.ghn, f.out_products, w_ih_products};
    saved.insert(saved.end(), weights.begin(), weights.end());
    context->save_for_backward(saved);
    return {f.out.view({input.size(0), input.size(1), -1})};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto &x = saved[0], &lengths = saved[1], &w_ih_products = saved[6];
    const Forward f{saved[2], saved[3], saved[4], saved[5]};
    const int64_t D = f.out.size(2), H = f.out.size(3), G = 3 * H;
    const Sizes n{x.size(0), x.size(1), x.size(2), H, D};
    std::vector<at::Tensor> w_hh, w_hh_products;
    for (int64_t d = 0; d < D; ++d) {
      w_hh.push_back(saved[8 + 4 * d].detach());
      w_hh_products.push_back(w_hh.back().to(x.scalar_type()));
    }
    const std::vector<int64_t> lens(lengths.data_ptr<int64_t>(), lengths.data_ptr<int64_t>() + lengths.numel());
    const auto dout = gradients[0].defined() ? gradients[0].contiguous().view(f.out.sizes()) : at::zeros_like(f.out);
    auto dgi = at::empty_like(f.gates), dgh = at::empty_like(f.gates);
    const bool low = f.out_products.defined();
    auto dgi_products = low ? at::empty_like(dgi, x.options()) : dgi;
    auto dgh_products = low ? at::empty_like(dgh, x.options()) : dgh;
    AT_DISPATCH_FLOATING_TYPES(f.out.scalar_type(), "mixseq::gru_recurrence_backward", [&] {
      auto none = at::Tensor();
      recurrence_backward<scalar_t>(f, dout, lens, w_hh, w_hh_products, n, dgi, dgh, low ? dgi_products : none,
                                    low ? dgh_products : none);
    });
    // Each weight's gradient in one product over all T·B frames, x's in one for both directions:
    // from operands in the products' dtype (x's), into the cell's.
    const int64_t frames = n.steps * n.batch;
    const auto x2 = x.view({frames, n.input});
    const auto dgi2 = dgi_products.view({frames, D, G}), dgh2 = dgh_products.view({frames, D, G});
    torch::autograd::variable_list result{
        widening_matmul(dgi2.view({frames, D * G}), w_ih_products).view(x.sizes()).to(x.scalar_type()), at::Tensor()};
    const auto& outputs = low ? f.out_products : f.out;  // h_t in the products' dtype
    for (int64_t d = 0; d < D; ++d) {
      // h_{t-1} of every frame in processing order: 0 before the first step (and past a length)
      const auto out_d = outputs.select(2, d);
      const auto zero = at::zeros({1, n.batch, H}, outputs.options());
      const auto h_prev = (d == 0 ? at::cat({zero, out_d.narrow(0, 0, n.steps - 1)})
                                  : at::cat({out_d.narrow(0, 1, n.steps - 1), zero}))
                              .view({frames, H});
      const auto dgi_d = dgi2.select(1, d), dgh_d = dgh2.select(1, d);
      result.push_back(widening_matmul(dgi_d.t(), x2));     // w_ih
      result.push_back(widening_matmul(dgh_d.t(), h_prev));  // w_hh
      // the biases' from the cell's own gradients
      result.push_back(dgi.view({frames, D, G}).select(1, d).sum(0));  // b_ih
      result.push_back(dgh.view({frames, D, G}).select(1, d).sum(0));  // b_hh
    }
    return result;
  }
};

}  // namespace

bool gru_recurrence_applies(const torch::Tensor& x, const std::vector<GruWeights>& directions) {
  if (!x.defined() || !x.device().is_cpu() || !at::isFloatingType(x.scalar_type()) || directions.empty() ||
      directions.size() > 2)
    return false;
  const auto dtype = directions[0].w_hh.scalar_type();
  if (dtype != at::kFloat && dtype != at::kDouble) return false;
  // Under autocast the recurrence runs in fp32 (x converted): fp32 weights only.
  if (compat::is_autocast_enabled(c10::DeviceType::CPU) ? dtype != at::kFloat : x.scalar_type() != dtype)
    return false;
  for (const auto& w : directions)
    for (const auto* t : {&w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh})
      if (!t->defined() || !t->device().is_cpu() || t->scalar_type() != dtype) return false;
  return true;
}

torch::Tensor gru_recurrence(const torch::Tensor& x, const torch::Tensor& lengths,
                             const std::vector<GruWeights>& directions) {
  MIXSEQ_CHECK(gru_recurrence_applies(x, directions),
               "gru_recurrence: needs CPU tensors, fp32 weights (or fp64 ones with x in fp64 and autocast off)");
  MIXSEQ_CHECK(x.dim() == 3 && x.size(0) >= 1, "gru_recurrence: x must be [T, B, Din] with T >= 1, not ", x.sizes());
  const int64_t steps = x.size(0), batch = x.size(1), in = x.size(2);
  const int64_t hidden = directions[0].w_hh.size(1), gates = 3 * hidden;
  for (const auto& w : directions)
    MIXSEQ_CHECK(w.w_ih.sizes() == torch::IntArrayRef({gates, in}) &&
                     w.w_hh.sizes() == torch::IntArrayRef({gates, hidden}) && w.b_ih.numel() == gates &&
                     w.b_hh.numel() == gates,
                 "gru_recurrence: weights [", w.w_ih.sizes(), "], [", w.w_hh.sizes(), "] do not fit x [", x.sizes(),
                 "] and hidden ", hidden);
  const auto lens_tensor = lengths.to(torch::kCPU, torch::kLong).contiguous();
  MIXSEQ_CHECK(lens_tensor.numel() == batch, "gru_recurrence: ", lens_tensor.numel(), " lengths for ", batch,
               " utterances");
  const std::vector<int64_t> lens(lens_tensor.data_ptr<int64_t>(), lens_tensor.data_ptr<int64_t>() + batch);
  for (const int64_t len : lens)
    MIXSEQ_CHECK(len >= 1 && len <= steps, "gru_recurrence: a length (", len, ") outside 1..", steps);

  // Under bf16 autocast x in bf16 for the products; the cell in the weights' dtype.
  const auto products = products_dtype(directions[0].w_hh.scalar_type());
  const AutocastScope fp32(Precision::kFp32, x.device());  // the products' dtype is chosen here, not by autocast
  const auto input = x.to(products);
  bool needs_graph = at::GradMode::is_enabled() && input.requires_grad();
  std::vector<at::Tensor> flat;
  for (const auto& w : directions)
    for (const auto* t : {&w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh}) {
      needs_graph = needs_graph || (at::GradMode::is_enabled() && t->requires_grad());
      flat.push_back(*t);
    }
  if (!needs_graph) {  // inference: nothing kept for backward
    std::vector<GruWeights> detached;
    std::vector<at::Tensor> w_ih;
    for (const auto& w : directions) {
      detached.push_back({w.w_ih.detach(), w.w_hh.detach(), w.b_ih.detach(), w.b_hh.detach()});
      w_ih.push_back(detached.back().w_ih);
    }
    const auto f = run_forward(input.contiguous(), lens, detached, at::cat(w_ih).to(products), /*keep=*/false);
    return f.out.view({steps, batch, -1});
  }
  return GruRecurrence::apply(input, lens_tensor, at::TensorList(flat))[0];
}

}  // namespace mixseq
