#include "mixseq/nn/adaptive_embedding.h"

#include <ATen/ATen.h>

#include <cmath>
#include <string>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

const AdaptiveClusters& checked(const AdaptiveClusters& clusters) {
  clusters.check("AdaptiveEmbedding");
  return clusters;
}

}  // namespace

AdaptiveEmbeddingImpl::AdaptiveEmbeddingImpl(const AdaptiveClusters& clusters) : clusters_(checked(clusters)) {
  const int64_t matrices = clusters_.matrix_count();
  for (int64_t i = 0; i < matrices; ++i) {
    const int64_t rows = matrices == 1 ? clusters_.vocab_size : clusters_.size(i);
    weights_.push_back(register_parameter("weight_" + std::to_string(i), at::empty({rows, clusters_.dim(i)})));
    projections_.push_back(clusters_.projected()
                               ? register_parameter("projection_" + std::to_string(i),
                                                    at::empty({clusters_.proj_dim, clusters_.dim(i)}))
                               : torch::Tensor());
  }
  torch::NoGradGuard no_grad;
  for (auto& weight : weights_) weight.normal_(0.0, 0.02);
  for (auto& projection : projections_)
    if (projection.defined()) projection.normal_(0.0, 0.01);
}

// Under autocast the projection's product comes out in bf16/fp16; the residual stream it starts
// stays in the parameters' dtype (LayerNorm wants its input in its weights' dtype).
torch::Tensor AdaptiveEmbeddingImpl::embed(int64_t i, const torch::Tensor& tokens) const {
  const auto vectors = at::embedding(weights_[i], tokens);  // [N, width]
  if (!projections_[i].defined()) return vectors;           // [N, D]
  return at::linear(vectors, projections_[i]).to(weights_[i].scalar_type());  // [N, D]
}

torch::Tensor AdaptiveEmbeddingImpl::forward(const torch::Tensor& tokens) {
  const double scale = std::sqrt(static_cast<double>(clusters_.proj_dim));  // the reference's emb_scale
  if (clusters_.matrix_count() == 1) return embed(0, tokens) * scale;        // [..., D]
  // One matrix per cluster: embed each cluster's tokens and put them back in place.
  const auto flat = tokens.reshape({-1});                                    // [N]
  torch::Tensor out;                                                         // [N, D]
  for (int64_t i = 0; i < clusters_.count(); ++i) {
    const auto rows = ((flat >= clusters_.begin(i)) & (flat < clusters_.end(i))).nonzero().squeeze(1);  // [N_i]
    if (rows.numel() == 0) continue;
    const auto vectors = embed(i, flat.index_select(0, rows) - clusters_.begin(i));  // [N_i, D]
    if (!out.defined()) out = at::zeros({flat.size(0), clusters_.proj_dim}, vectors.options());
    out = out.index_copy(0, rows, vectors);
  }
  if (!out.defined()) out = at::zeros({0, clusters_.proj_dim}, weights_[0].options());
  auto shape = tokens.sizes().vec();
  shape.push_back(clusters_.proj_dim);
  return (out * scale).view(shape);                                          // [..., D]
}

}  // namespace mixseq
