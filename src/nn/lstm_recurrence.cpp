#include "mixseq/nn/lstm_recurrence.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mixseq/nn/bf16_matmul.h"
#include "mixseq/nn/bf16_rows.h"
#include "mixseq/nn/packed_bf16_matrix.h"
#include "mixseq/nn/vectorized_tanh.h"
#include "mixseq/util/tensor_identity.h"
#include "nn/lstm_hidden_panels.h"
#include "util/torch_compat.h"
#include "util/vector_clones.h"

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

// One sentence's cell at one step, forward, over `units` hidden units whose four gates lie
// `stride` apart (the whole layer: stride = units = H; a thread's share of the units in
// panel_recurrence_forward: stride H): g from pre-activations (to which hg, laid out as g, is
// added when given) to the activated i, f, g, o; c_prev [units] -> c, tc = tanh(c) and h [units].
// σ(x) = (1 + tanh(x / 2)) / 2 for i, f and o; tanh for g: one tanh pass over all four.
template <typename scalar_t>
__attribute__((always_inline)) inline void cell_forward_row(scalar_t* __restrict g, const scalar_t* __restrict hg,
                                                            const scalar_t* __restrict c_prev, scalar_t* __restrict c,
                                                            scalar_t* __restrict tc, scalar_t* __restrict h,
                                                            int64_t units, int64_t stride) {
  scalar_t* const gi = g;
  scalar_t* const gf = g + stride;
  scalar_t* const gg = g + 2 * stride;
  scalar_t* const go = g + 3 * stride;
  if (hg)
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t j = 0; j < units; ++j) g[q * stride + j] += hg[q * stride + j];
  for (int64_t j = 0; j < units; ++j) {
    gi[j] *= scalar_t(0.5);
    gf[j] *= scalar_t(0.5);
    go[j] *= scalar_t(0.5);
  }
  if (stride == units) {
    tanh_in_place(g, 4 * units);
  } else {
    for (int64_t q = 0; q < 4; ++q) tanh_in_place(g + q * stride, units);
  }
  for (int64_t j = 0; j < units; ++j) {
    gi[j] = scalar_t(0.5) + scalar_t(0.5) * gi[j];
    gf[j] = scalar_t(0.5) + scalar_t(0.5) * gf[j];
    go[j] = scalar_t(0.5) + scalar_t(0.5) * go[j];
  }
  for (int64_t j = 0; j < units; ++j) tc[j] = c[j] = gf[j] * c_prev[j] + gi[j] * gg[j];
  tanh_in_place(tc, units);
  for (int64_t j = 0; j < units; ++j) h[j] = go[j] * tc[j];
}

// One sentence's cell at one step, backward: dh [H] (dL/dh_t through h_{t+1}) plus dout [H] (the
// output's gradient, when given) and dc [H] (dL/dc_t through c_{t+1}) -> dg [4H], the
// pre-activation gradients, and dc becomes dL/dc_{t-1} through c_t. dh is overwritten.
template <typename scalar_t>
__attribute__((always_inline)) inline void cell_backward_row(const scalar_t* __restrict g,
                                                             const scalar_t* __restrict tc,
                                                             const scalar_t* __restrict c_prev,
                                                             const scalar_t* __restrict dout, scalar_t* __restrict dg,
                                                             scalar_t* __restrict dh, scalar_t* __restrict dc,
                                                             int64_t H) {
  if (dout)
    for (int64_t j = 0; j < H; ++j) dh[j] += dout[j];
  for (int64_t j = 0; j < H; ++j) {
    const scalar_t i = g[j], fg = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];
    const scalar_t dc_t = dc[j] + dh[j] * o * (1 - tc[j] * tc[j]);
    dg[j] = dc_t * gg * i * (1 - i);
    dg[H + j] = dc_t * c_prev[j] * fg * (1 - fg);
    dg[2 * H + j] = dc_t * i * (1 - gg * gg);
    dg[3 * H + j] = dh[j] * tc[j] * o * (1 - o);
    dc[j] = dc_t * fg;
  }
}

// The rows above compiled per instruction set for float (Debian's LibTorch and mixseq build for
// the x86-64 baseline, where these loops ran at about 10 ns an element); fp64 for gradient checks.
MIXSEQ_VECTOR_CLONES
void cell_forward(float* g, const float* hg, const float* c_prev, float* c, float* tc, float* h, int64_t units,
                  int64_t stride) {
  cell_forward_row(g, hg, c_prev, c, tc, h, units, stride);
}
void cell_forward(double* g, const double* hg, const double* c_prev, double* c, double* tc, double* h,
                  int64_t units, int64_t stride) {
  cell_forward_row(g, hg, c_prev, c, tc, h, units, stride);
}
MIXSEQ_VECTOR_CLONES
void cell_backward(const float* g, const float* tc, const float* c_prev, const float* dout, float* dg, float* dh,
                   float* dc, int64_t H) {
  cell_backward_row(g, tc, c_prev, dout, dg, dh, dc, H);
}
void cell_backward(const double* g, const double* tc, const double* c_prev, const double* dout, double* dg,
                   double* dh, double* dc, int64_t H) {
  cell_backward_row(g, tc, c_prev, dout, dg, dh, dc, H);
}

// A step's product c = a b in the cell's dtype: fp32 through oneDNN's sgemm where the process has
// it (at this size 2-3x faster than at::mm's OpenBLAS, nn/bf16_matmul.h), fp64 (gradient checks)
// through at::mm.
void step_product(at::Tensor& c, const at::Tensor& a, const at::Tensor& b) {
  if (c.scalar_type() == at::kFloat) {
    float_matmul_into(a, b, c, /*accumulate=*/false);
  } else {
    at::mm_out(c, a, b);
  }
}

// A step's product under bf16 products: c (+)= a b from bf16 operands into fp32, on the tiles
// where `packed` holds b, else through oneDNN's bf16 GEMM (nn/bf16_matmul.h).
void step_product_bf16(const at::Tensor& a, const at::Tensor& b, const PackedBf16Matrix& packed, at::Tensor& c,
                       bool accumulate) {
  if (packed.rows() > 0) {
    packed.multiply_into(a, c, accumulate);
  } else {
    bf16_matmul_into(a, b, c, accumulate);
  }
}

// Whether the fp32 forward (no autocast) runs on nn/lstm_hidden_panels.h: where the CPU has
// AVX-512 and oneDNN's sgemm is called directly (not where ATEN_CPU_CAPABILITY=default holds
// ATen to its baseline kernels for the same bits on every machine: nn/bf16_matmul.h), over
// sequences of at least 8 steps. Laying W_hh out costs about two steps' products, so a decoder's
// one step a call (GNMT's beam search: 15% fewer sentences/s on panels) stays with oneDNN.
bool panels_apply(int64_t steps) { return steps >= 8 && LstmHiddenPanels::available() && float_matmul_is_direct(); }

}  // namespace

struct LstmPanelCache::State {
  std::mutex lock;
  TensorIdentity source;                     // the W_hh the panels were laid out from
  std::shared_ptr<LstmHiddenPanels> panels;  // read only, once kept

  // The panels of w_hh if laid out from it as it is now, else null.
  std::shared_ptr<LstmHiddenPanels> find(const at::Tensor& w_hh) {
    const std::lock_guard<std::mutex> hold(lock);
    return panels && source.matches(w_hh) ? panels : nullptr;
  }

  // Keeps `laid_out` as w_hh's panels; an undefined w_hh: nothing.
  void keep(const at::Tensor& w_hh, std::shared_ptr<LstmHiddenPanels> laid_out) {
    const std::lock_guard<std::mutex> hold(lock);
    source = TensorIdentity(w_hh);
    panels = w_hh.defined() ? std::move(laid_out) : nullptr;
  }
};

bool LstmPanelCache::holds(const torch::Tensor& w_hh) const { return state_->find(w_hh) != nullptr; }

void LstmPanelCache::drop() { state_->keep(at::Tensor(), nullptr); }

LstmPanelCache::LstmPanelCache() : state_(std::make_unique<State>()) {}
LstmPanelCache::~LstmPanelCache() = default;
LstmPanelCache::LstmPanelCache(const LstmPanelCache&) : state_(std::make_unique<State>()) {}
LstmPanelCache& LstmPanelCache::operator=(const LstmPanelCache&) {
  state_ = std::make_unique<State>();
  return *this;
}

namespace {

// Up to this many bytes of packed W_hh, the threads of panel_recurrence_forward share out the
// sentences rather than the hidden units: each multiplies by all of W_hh, which its L2 cache holds
// (1-2 MiB a core on the CPUs of docs/benchmarks.md), and needs no other thread's h_t, so the
// sequence runs with no barrier at each step. The LSTM language model's W_hh (H 200) packs into
// 666 KB; GNMT's (H 256) into 1 MiB, which stays with the units.
constexpr int64_t kRowSplitPackedBytes = 768 * 1024;

// The fp32 forward on panels, the threads in one parallel region over the sequence. Where each
// thread has at least two sentences and W_hh packs small (kRowSplitPackedBytes), they share out
// the sentences: each packs its share of the panels, and after one barrier runs its sentences'
// steps over all the hidden units. Otherwise they share out the hidden units in panels of 16 (at
// most one thread a panel): at each step a thread adds h_{t-1} W_hhᵀ for its units into gates_t
// and runs the cell over them in place (the same cell_forward as below, each gate's units H
// apart), then waits for the others, since the next step's products read all of h_t. Each
// output is the same sum either way (a panel block sums over k in order for each of its rows).
// Same tensors and contract as recurrence_forward.
//
// With a cache (only where nothing is recorded), W_hh laid out by an earlier call is taken from it
// and nothing is packed; otherwise the threads lay it out, and the cache keeps it.
void panel_recurrence_forward(const at::Tensor& h0, const at::Tensor& c0, const at::Tensor& w_hh, const Sizes& n,
                              LstmPanelCache* cache, at::Tensor& gates, at::Tensor& cells, at::Tensor& cell_tanh,
                              at::Tensor& output) {
  const int64_t B = n.batch, T = n.steps, H = n.hidden;
  const auto w = w_hh.stride(1) == 1 ? w_hh : w_hh.contiguous();  // [4H, H]
  auto laid_out = cache != nullptr ? cache->state().find(w_hh) : nullptr;
  const bool to_pack = laid_out == nullptr;
  // (pack() reads w, which may be a copy made here: a kept layout is never packed again.)
  if (to_pack) laid_out = std::make_shared<LstmHiddenPanels>(w.data_ptr<float>(), H, w.stride(0));
  LstmHiddenPanels& panels = *laid_out;  // written only by the packing below, in this call
  const int64_t P = panels.panels();
  const int64_t available = at::in_parallel_region() ? 1 : at::get_num_threads();
  const bool by_sentences = available > 1 && B >= 2 * available &&
                            P * LstmHiddenPanels::kUnits * H * 4 * int64_t{sizeof(float)} <= kRowSplitPackedBytes;
  const int64_t threads = by_sentences ? available : std::min<int64_t>(available, P);
  float* g_all = gates.data_ptr<float>();
  float* c_all = cells.data_ptr<float>();
  float* tc_all = cell_tanh.data_ptr<float>();
  float* h_all = output.data_ptr<float>();
  const float* h_first = h0.data_ptr<float>();
  const float* c_first = c0.data_ptr<float>();
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
  {
#ifdef _OPENMP
    const int64_t id = omp_get_thread_num(), count = omp_get_num_threads();
#else
    const int64_t id = 0, count = 1;
#endif
    const int64_t p_begin = P * id / count, p_end = P * (id + 1) / count;
    if (by_sentences) {
      if (to_pack) {
        panels.pack(p_begin, p_end);
#ifdef _OPENMP
#pragma omp barrier
#endif
      }
      const int64_t b_begin = B * id / count, b_end = B * (id + 1) / count;
      for (int64_t t = 0; t < T; ++t) {
        const float* h_prev = t == 0 ? h_first + b_begin * H : h_all + (b_begin * T + t - 1) * H;
        panels.add_products(h_prev, t == 0 ? H : T * H, b_end - b_begin, 0, P, g_all + (b_begin * T + t) * 4 * H,
                            T * 4 * H);
        for (int64_t b = b_begin; b < b_end; ++b) {
          const int64_t here = (b * T + t) * H;  // this sentence's step t
          const float* c_prev = t == 0 ? c_first + b * H : c_all + here - H;
          cell_forward(g_all + (b * T + t) * 4 * H, nullptr, c_prev, c_all + here, tc_all + here, h_all + here, H, H);
        }
      }
    } else {
      const int64_t u_begin = std::min(H, p_begin * LstmHiddenPanels::kUnits);
      const int64_t units = std::min(H, p_end * LstmHiddenPanels::kUnits) - u_begin;
      if (to_pack) panels.pack(p_begin, p_end);  // only this thread multiplies by them
      for (int64_t t = 0; t < T; ++t) {
        const float* h_prev = t == 0 ? h_first : h_all + (t - 1) * H;
        panels.add_products(h_prev, t == 0 ? H : T * H, B, p_begin, p_end, g_all + t * 4 * H, T * 4 * H);
        for (int64_t b = 0; b < B && units > 0; ++b) {
          float* g = g_all + (b * T + t) * 4 * H + u_begin;  // this thread's units of each gate, H apart
          const int64_t here = (b * T + t) * H + u_begin;   // this sentence's step t, this thread's units
          const float* c_prev = (t == 0 ? c_first + b * H : c_all + (b * T + t - 1) * H) + u_begin;
          cell_forward(g, nullptr, c_prev, c_all + here, tc_all + here, h_all + here, units, H);
        }
#ifdef _OPENMP
#pragma omp barrier
#endif
      }
    }
  }
  if (to_pack && cache != nullptr) cache->state().keep(w_hh, std::move(laid_out));
}

// The raw tensors of one forward pass, batch-first: gates [B, T, 4H] (pre-activations from x on
// entry, activated i, f, g, o on return), cells and cell_tanh [B, T, H], output [B, T, H]. Under
// bf16 autocast (`h_products` [B, T, H] bf16 defined, h0_products [B, H] its h_0) h_{t-1} W_hhᵀ
// goes from bf16 operands straight into gates_t in fp32 (nn/bf16_matmul.h), and the cell's pass
// writes h_t in bf16 as well for the next step's product.
template <typename scalar_t>
void recurrence_forward(const at::Tensor& h0, const at::Tensor& c0, const at::Tensor& w_hh,
                        const at::Tensor& h0_products, const Sizes& n, LstmPanelCache* panel_cache,
                        at::Tensor& gates, at::Tensor& cells, at::Tensor& cell_tanh, at::Tensor& output,
                        at::Tensor& h_products) {
  const int64_t B = n.batch, T = n.steps, H = n.hidden;
  const bool bf16_products = h_products.defined();
  if constexpr (std::is_same_v<scalar_t, float>) {
    if (!bf16_products && panels_apply(T))
      return panel_recurrence_forward(h0, c0, w_hh, n, panel_cache, gates, cells, cell_tanh, output);
  }
  // h_{t-1} W_hhᵀ in the cell's dtype, added by the cell's pass (not under bf16 autocast).
  auto hidden_gates = bf16_products ? at::Tensor() : at::empty({B, 4 * H}, gates.options());
  scalar_t* g_all = gates.data_ptr<scalar_t>();
  scalar_t* c_all = cells.data_ptr<scalar_t>();
  scalar_t* tc_all = cell_tanh.data_ptr<scalar_t>();
  scalar_t* h_all = output.data_ptr<scalar_t>();
  c10::BFloat16* h_low_all = bf16_products ? h_products.data_ptr<c10::BFloat16>() : nullptr;
  const scalar_t* c_first = c0.data_ptr<scalar_t>();
  const scalar_t* hg = bf16_products ? nullptr : hidden_gates.data_ptr<scalar_t>();
  const auto w_hh_t = w_hh.t();
  const auto packed = PackedBf16Matrix::where_possible(w_hh_t);  // [H, 4H], bf16 products only
  for (int64_t t = 0; t < T; ++t) {
    if (bf16_products) {
      auto step_gates = gates.select(1, t);  // [B, 4H]
      step_product_bf16(t == 0 ? h0_products : h_products.select(1, t - 1), w_hh_t, packed, step_gates,
                        /*accumulate=*/true);
    } else {
      step_product(hidden_gates, t == 0 ? h0 : output.select(1, t - 1), w_hh_t);
    }
    at::parallel_for(0, B, rows_per_task(n), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const scalar_t* c_prev = t == 0 ? c_first + b * H : c_all + (b * T + t - 1) * H;
        scalar_t* h = h_all + (b * T + t) * H;
        cell_forward(g_all + (b * T + t) * 4 * H, hg ? hg + b * 4 * H : nullptr, c_prev, c_all + (b * T + t) * H,
                     tc_all + (b * T + t) * H, h, H, H);
        keep_for_products(h, H, h_low_all ? h_low_all + (b * T + t) * H : nullptr);
      }
    });
  }
}

struct Forward {
  at::Tensor gates, cells, cell_tanh, output;
  at::Tensor h0_products, h_products;  // h_0 [B, H] and h_t [B, T, H] in bf16; undefined without autocast
};

// x [B, T, Din] in the products' dtype, h0 and c0 in the cell's; `w` with its matrices in the
// products' dtype and its biases in the cell's.
Forward run_forward(const at::Tensor& x, const at::Tensor& h0, const at::Tensor& c0, const LstmWeights& w) {
  const Sizes n{x.size(0), x.size(1), x.size(2), w.w_hh.size(1)};
  const auto cell_dtype = h0.scalar_type();
  Forward f;
  // x W_ihᵀ + b_ih + b_hh for all steps at once.
  const auto x2 = x.reshape({n.batch * n.steps, n.input});
  f.gates = x.scalar_type() == cell_dtype ? float_matmul(x2, w.w_ih.t()).add_(w.b_ih + w.b_hh)
                                          : at::mm(x2, w.w_ih.t()).to(cell_dtype).add_(w.b_ih + w.b_hh);
  f.gates = f.gates.view({n.batch, n.steps, 4 * n.hidden});
  f.cells = at::empty({n.batch, n.steps, n.hidden}, h0.options());
  f.cell_tanh = at::empty_like(f.cells);
  f.output = at::empty_like(f.cells);
  if (x.scalar_type() != cell_dtype) {
    f.h0_products = h0.to(x.scalar_type());
    f.h_products = at::empty_like(f.cells, x.options());
  }
  AT_DISPATCH_FLOATING_TYPES(cell_dtype, "mixseq::lstm_recurrence", [&] {
    recurrence_forward<scalar_t>(h0, c0, w.w_hh, f.h0_products, n, w.panel_cache, f.gates, f.cells, f.cell_tanh,
                                 f.output, f.h_products);
  });
  return f;
}

// dgates [B, T, 4H] (pre-activation gradients) from the output's and final state's gradients;
// returns dh_0 and dc_0. Under bf16 autocast (`dgates_products` [B, T, 4H] bf16 defined) the
// cell's pass writes dgates in bf16 as well, the operand of dgates_t W_hh and of the weights'
// gradients.
template <typename scalar_t>
std::pair<at::Tensor, at::Tensor> recurrence_backward(const Forward& f, const at::Tensor& c0, const at::Tensor& w_hh,
                                                      const at::Tensor& grad_output, at::Tensor dh, at::Tensor dc,
                                                      const Sizes& n, at::Tensor& dgates, at::Tensor& dgates_products) {
  const int64_t B = n.batch, T = n.steps, H = n.hidden;
  const scalar_t* g_all = f.gates.data_ptr<scalar_t>();
  const scalar_t* c_all = f.cells.data_ptr<scalar_t>();
  const scalar_t* tc_all = f.cell_tanh.data_ptr<scalar_t>();
  const scalar_t* c_first = c0.data_ptr<scalar_t>();
  const scalar_t* dout = grad_output.defined() ? grad_output.data_ptr<scalar_t>() : nullptr;
  scalar_t* dg_all = dgates.data_ptr<scalar_t>();
  c10::BFloat16* dg_low_all = dgates_products.defined() ? dgates_products.data_ptr<c10::BFloat16>() : nullptr;
  scalar_t* dh_next = dh.data_ptr<scalar_t>();  // dL/dh_t through h_{t+1}: dgates_{t+1} W_hh
  scalar_t* dc_next = dc.data_ptr<scalar_t>();  // dL/dc_t through c_{t+1}
  const auto packed = PackedBf16Matrix::where_possible(w_hh);  // [4H, H], bf16 products only
  for (int64_t t = T - 1; t >= 0; --t) {
    at::parallel_for(0, B, rows_per_task(n), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const scalar_t* c_prev = t == 0 ? c_first + b * H : c_all + (b * T + t - 1) * H;
        scalar_t* dg = dg_all + (b * T + t) * 4 * H;
        cell_backward(g_all + (b * T + t) * 4 * H, tc_all + (b * T + t) * H, c_prev,
                      dout ? dout + (b * T + t) * H : nullptr, dg, dh_next + b * H, dc_next + b * H, H);
        keep_for_products(dg, 4 * H, dg_low_all ? dg_low_all + (b * T + t) * 4 * H : nullptr);
      }
    });
    // dL/dh_{t-1} through gates_t
    if (dg_low_all) {
      step_product_bf16(dgates_products.select(1, t), w_hh, packed, dh, /*accumulate=*/false);
    } else {
      step_product(dh, dgates.select(1, t), w_hh);
    }
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
    context->save_for_backward({input, h_first, c_first, weights.w_ih, weights.w_hh, f.gates, f.cells, f.cell_tanh,
                                f.output, f.h0_products, f.h_products});
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
    const Forward f{saved[5], saved[6], saved[7], saved[8], saved[9], saved[10]};
    const Sizes n{x.size(0), x.size(1), x.size(2), w_hh.size(1)};
    const auto cell_dtype = h0.scalar_type();
    const auto dtype_of = [&](const char* name) { return context->saved_data[name].toScalarType(); };
    const auto grad_output = gradients[0].defined() ? gradients[0].to(cell_dtype).contiguous() : at::Tensor();
    auto dh = gradients[1].defined() ? gradients[1].to(cell_dtype).clone(at::MemoryFormat::Contiguous)
                                     : at::zeros_like(h0);
    auto dc = gradients[2].defined() ? gradients[2].to(cell_dtype).clone(at::MemoryFormat::Contiguous)
                                     : at::zeros_like(c0);
    auto dgates = at::empty_like(f.gates);
    const bool bf16_products = f.h_products.defined();
    auto dgates_products = bf16_products ? at::empty_like(dgates, w_hh.options()) : at::Tensor();
    AT_DISPATCH_FLOATING_TYPES(cell_dtype, "mixseq::lstm_recurrence_backward", [&] {
      std::tie(dh, dc) = recurrence_backward<scalar_t>(f, c0, w_hh, grad_output, dh, dc, n, dgates, dgates_products);
    });
    // Products in the cell's dtype; under bf16 autocast from bf16 operands, summed in fp32.
    // Each weight's gradient in one product over all B·T positions.
    const int64_t positions = n.batch * n.steps;
    const auto dg = dgates.view({positions, 4 * n.hidden});
    const auto dg_products = bf16_products ? dgates_products.view({positions, 4 * n.hidden}) : dg;
    const auto h_prev = at::cat({(bf16_products ? f.h0_products : h0).unsqueeze(1),
                                 (bf16_products ? f.h_products : f.output).slice(1, 0, n.steps - 1)},
                                1)
                            .view({positions, n.hidden});  // h_{t-1} at every position, in the products' dtype
    const auto grad_bias = dg.sum(0);
    return {widening_matmul(dg_products, w_ih).view({n.batch, n.steps, n.input}).to(dtype_of("x_dtype")),
            dh.to(dtype_of("h0_dtype")),
            dc.to(dtype_of("c0_dtype")),
            widening_matmul(dg_products.t(), x.view({positions, n.input})),
            widening_matmul(dg_products.t(), h_prev),
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
                                in_products_cached(weights.w_hh, product_dtype), weights.b_ih, weights.b_hh,
                                weights.panel_cache});
    const int64_t T = x.size(1);
    return {f.output, f.output.select(1, T - 1), f.cells.select(1, T - 1)};
  }
  if (weights.panel_cache != nullptr) weights.panel_cache->drop();  // training moves the weights
  auto outputs = LstmRecurrence::apply(x, h0, c0, weights.w_ih, weights.w_hh, weights.b_ih, weights.b_hh);
  return {outputs[0], outputs[1], outputs[2]};
}

}  // namespace mixseq
