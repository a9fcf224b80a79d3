// AdaptiveEmbedding: adaptive input representations (Baevski & Auli 2019) as Transformer-XL's
// reference builds them (AdaptiveEmbedding in kimiyoung/transformer-xl,
// pytorch/mem_transformer.py): the vocabulary is split into clusters (nn/adaptive_clusters.h);
// a token's vector comes from its cluster's matrix, is projected to the model width D
// (proj_dim) where the cluster has a projection, and is scaled by sqrt(D).
//
// Parameters: weight_<i> [cluster size (all of V when div_val is 1), width], projection_<i>
// [D, width] where projected. They start as the reference's train.py leaves them with its
// defaults: weights N(0, 0.02), projections N(0, 0.01). An adaptive softmax may tie its output
// vectors and projections to these tensors (nn/projected_adaptive_log_softmax.h).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <vector>

#include "mixseq/nn/adaptive_clusters.h"

namespace mixseq {

class AdaptiveEmbeddingImpl : public torch::nn::Module {
 public:
  // Throws mixseq::Error for clusters that do not work (AdaptiveClusters::check).
  explicit AdaptiveEmbeddingImpl(const AdaptiveClusters& clusters);

  // tokens [...] int64 in [0, V) -> [..., D] in the parameters' dtype, also under autocast.
  torch::Tensor forward(const torch::Tensor& tokens);

  const AdaptiveClusters& clusters() const { return clusters_; }
  // Matrix `i` (< clusters().matrix_count()) and its projection (undefined when not projected).
  const torch::Tensor& weight(int64_t i) const { return weights_[i]; }
  const torch::Tensor& projection(int64_t i) const { return projections_[i]; }

 private:
  // The vectors of `tokens` [N] (ids inside matrix i's rows) projected to D -> [N, D].
  torch::Tensor embed(int64_t i, const torch::Tensor& tokens) const;

  AdaptiveClusters clusters_;
  std::vector<torch::Tensor> weights_;      // registered as weight_<i>
  std::vector<torch::Tensor> projections_;  // registered as projection_<i>, or undefined
};
TORCH_MODULE(AdaptiveEmbedding);

}  // namespace mixseq
