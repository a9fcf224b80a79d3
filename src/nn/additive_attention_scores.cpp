#include "mixseq/nn/additive_attention_scores.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <type_traits>
#include <vector>

#include "mixseq/nn/vectorized_tanh.h"
#include "mixseq/util/error.h"
#include "util/lane_dot.h"

namespace mixseq {
namespace {

// Elements of the [rows, S, D] block whose tanh is taken in one call: large enough that the
// call's own cost is small, small enough (64 KiB) to stay in the core's L2 while it is reduced.
constexpr int64_t kBlockElements = 16384;

struct Shape {
  int64_t batch, queries, sources, width;  // B, T, S, D
};

Shape shape_of(const at::Tensor& query, const at::Tensor& keys) {
  return {query.size(0), query.size(1), keys.size(1), query.size(2)};
}

inline void apply_tanh(float* x, int64_t n) { vectorized_tanh_in_place(x, n); }
inline void apply_tanh(double* x, int64_t n) {  // gradient checks
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

// Rows [first_t, first_t + rows) of sentence b: hidden[r, s, :] = tanh(q[b, t] + k[b, s]).
template <typename scalar_t>
void tanh_block(const scalar_t* query, const scalar_t* keys, const Shape& n, int64_t b, int64_t first_t, int64_t rows,
                scalar_t* hidden) {
  for (int64_t r = 0; r < rows; ++r) {
    const scalar_t* q = query + (b * n.queries + first_t + r) * n.width;
    for (int64_t s = 0; s < n.sources; ++s) {
      const scalar_t* k = keys + (b * n.sources + s) * n.width;
      scalar_t* h = hidden + (r * n.sources + s) * n.width;
      for (int64_t d = 0; d < n.width; ++d) h[d] = q[d] + k[d];
    }
  }
  apply_tanh(hidden, rows * n.sources * n.width);
}

int64_t rows_per_block(const Shape& n) { return std::max<int64_t>(1, kBlockElements / (n.sources * n.width)); }

template <typename scalar_t>
at::Tensor scores_forward(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& v) {
  const Shape n = shape_of(query, keys);
  auto scores = at::empty({n.batch, n.queries, n.sources}, query.options());
  const scalar_t* q = query.data_ptr<scalar_t>();
  const scalar_t* k = keys.data_ptr<scalar_t>();
  const scalar_t* w = v.data_ptr<scalar_t>();
  scalar_t* out = scores.data_ptr<scalar_t>();
  if constexpr (std::is_same_v<scalar_t, float>) {
    // Each query's scores in one pass over its sentence's keys, about kBlockElements of [S, D] at
    // least to a thread.
    const int64_t grain = rows_per_block(n);
    at::parallel_for(0, n.batch * n.queries, grain, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row)  // row = b · T + t
        vectorized_tanh_dots(q + row * n.width, k + row / n.queries * n.sources * n.width, n.sources, w, n.width,
                             out + row * n.sources);
    });
    return scores;
  }
  const int64_t block_rows = rows_per_block(n);
  // One task per block of rows of one sentence.
  const int64_t blocks_per_sentence = (n.queries + block_rows - 1) / block_rows;
  at::parallel_for(0, n.batch * blocks_per_sentence, 1, [&](int64_t begin, int64_t end) {
    std::vector<scalar_t> hidden(block_rows * n.sources * n.width);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / blocks_per_sentence;
      const int64_t first_t = (task % blocks_per_sentence) * block_rows;
      const int64_t rows = std::min(block_rows, n.queries - first_t);
      tanh_block(q, k, n, b, first_t, rows, hidden.data());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t s = 0; s < n.sources; ++s)
          out[(b * n.queries + first_t + r) * n.sources + s] =
              lane_dot(hidden.data() + (r * n.sources + s) * n.width, w, n.width);
    }
  });
  return scores;
}

// With u = g[b, t, s] · v ⊙ (1 - h²) for h = tanh(q[b, t] + k[b, s]):
// dq[b, t] = sum_s u, dk[b, s] = sum_t u, dv = sum_{b, t, s} g[b, t, s] · h.
template <typename scalar_t>
std::vector<at::Tensor> scores_backward(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& v,
                                        const at::Tensor& grad) {
  const Shape n = shape_of(query, keys);
  auto grad_query = at::zeros_like(query);
  auto grad_keys = at::zeros_like(keys);
  auto grad_v = at::zeros_like(v);
  const scalar_t* q = query.data_ptr<scalar_t>();
  const scalar_t* k = keys.data_ptr<scalar_t>();
  const scalar_t* w = v.data_ptr<scalar_t>();
  const scalar_t* g = grad.data_ptr<scalar_t>();
  scalar_t* dq = grad_query.data_ptr<scalar_t>();
  scalar_t* dk = grad_keys.data_ptr<scalar_t>();
  scalar_t* dv_total = grad_v.data_ptr<scalar_t>();
  const int64_t block_rows = rows_per_block(n);
  std::mutex dv_mutex;
  // One task per sentence, so that a task owns its rows of dq and dk.
  at::parallel_for(0, n.batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<scalar_t> hidden(block_rows * n.sources * n.width);
    std::vector<scalar_t> dv(n.width, 0);
    for (int64_t b = begin; b < end; ++b) {
      for (int64_t first_t = 0; first_t < n.queries; first_t += block_rows) {
        const int64_t rows = std::min(block_rows, n.queries - first_t);
        tanh_block(q, k, n, b, first_t, rows, hidden.data());
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t t = first_t + r;
          scalar_t* dq_row = dq + (b * n.queries + t) * n.width;
          for (int64_t s = 0; s < n.sources; ++s) {
            const scalar_t gs = g[(b * n.queries + t) * n.sources + s];
            const scalar_t* h = hidden.data() + (r * n.sources + s) * n.width;
            scalar_t* dk_row = dk + (b * n.sources + s) * n.width;
            for (int64_t d = 0; d < n.width; ++d) {
              const scalar_t u = gs * w[d] * (1 - h[d] * h[d]);
              dq_row[d] += u;
              dk_row[d] += u;
              dv[d] += gs * h[d];
            }
          }
        }
      }
    }
    std::lock_guard<std::mutex> lock(dv_mutex);
    for (int64_t d = 0; d < n.width; ++d) dv_total[d] += dv[d];
  });
  return {grad_query, grad_keys, grad_v};
}

// fp64 stays fp64 (gradient checks); other floating dtypes compute in fp32.
at::ScalarType compute_dtype(const at::Tensor& query) {
  return query.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

at::Tensor compute_input(const at::Tensor& x, at::ScalarType dtype) { return x.to(dtype).contiguous(); }

at::Tensor forward_in(at::ScalarType dtype, const at::Tensor& query, const at::Tensor& keys, const at::Tensor& v) {
  return dtype == at::kDouble ? scores_forward<double>(query, keys, v) : scores_forward<float>(query, keys, v);
}

class AdditiveAttentionScores : public torch::autograd::Function<AdditiveAttentionScores> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& query, const at::Tensor& keys,
                            const at::Tensor& v) {
    const auto dtype = compute_dtype(query);
    const auto q = compute_input(query, dtype), k = compute_input(keys, dtype), w = compute_input(v, dtype);
    context->save_for_backward({q, k, w});
    context->saved_data["query_dtype"] = query.scalar_type();
    context->saved_data["keys_dtype"] = keys.scalar_type();
    context->saved_data["v_dtype"] = v.scalar_type();
    return forward_in(dtype, q, k, w);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto dtype = saved[0].scalar_type();
    const auto grad = compute_input(gradients[0], dtype);
    auto result = dtype == at::kDouble ? scores_backward<double>(saved[0], saved[1], saved[2], grad)
                                       : scores_backward<float>(saved[0], saved[1], saved[2], grad);
    return {result[0].to(context->saved_data["query_dtype"].toScalarType()),
            result[1].to(context->saved_data["keys_dtype"].toScalarType()),
            result[2].to(context->saved_data["v_dtype"].toScalarType())};
  }
};

}  // namespace

torch::Tensor additive_attention_scores_reference(const torch::Tensor& query, const torch::Tensor& keys,
                                                  const torch::Tensor& v) {
  const auto hidden = at::tanh(query.unsqueeze(2) + keys.unsqueeze(1));  // [B, T, S, D]
  const auto scores = at::matmul(hidden, v.to(hidden.scalar_type()));
  return scores.scalar_type() == at::kDouble ? scores : scores.to(at::kFloat);
}

torch::Tensor additive_attention_scores(const torch::Tensor& query, const torch::Tensor& keys, const torch::Tensor& v) {
  MIXSEQ_CHECK(query.dim() == 3 && keys.dim() == 3 && v.dim() == 1 && query.size(0) == keys.size(0) &&
                   query.size(2) == keys.size(2) && v.size(0) == query.size(2),
               "additive attention: query [B, T, D], keys [B, S, D] and v [D] expected, got ", query.sizes(), ", ",
               keys.sizes(), " and ", v.sizes());
  if (!query.device().is_cpu()) return additive_attention_scores_reference(query, keys, v);
  const bool needs_graph =
      at::GradMode::is_enabled() && (query.requires_grad() || keys.requires_grad() || v.requires_grad());
  if (!needs_graph) {  // decoding: nothing kept for backward
    const auto dtype = compute_dtype(query);
    return forward_in(dtype, compute_input(query, dtype), compute_input(keys, dtype), compute_input(v, dtype));
  }
  return AdditiveAttentionScores::apply(query, keys, v);
}

}  // namespace mixseq
