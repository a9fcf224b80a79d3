// ProjectedAdaptiveLogSoftmax: the adaptive softmax (Grave et al. 2017, "Efficient softmax
// approximation for GPUs") with projections, as Transformer-XL's reference computes it
// (ProjectedAdaptiveLogSoftmax in kimiyoung/transformer-xl, pytorch/utils/proj_adaptive_softmax.py).
//
// The vocabulary is split into clusters (nn/adaptive_clusters.h). The head scores the words of
// cluster 0 and one entry per tail cluster; a word w of tail cluster i has
//
//   log p(w | h) = log p_head(cluster i | h) + log p_i(w | h)
//
// so a target costs the head plus its own cluster, and -log p(target) never builds the [N, V]
// scores. As in the reference, tail cluster i is scored by the head's column head_size - i
// (cluster 1 by the last column), that is by row C - i of cluster_weight for C tail clusters.
// Without cutoffs this is a full softmax over one (possibly projected) output layer.
//
// Each cluster's scores are linear(linear(h, P_i^T), W_i, b_i), where P_i [D, width] is its
// projection (absent when not projected) and W_i its output vectors. With tie_weight the output
// vectors are the embedding's matrices (the same tensors: one parameter, one gradient); with
// tie_projs the tail clusters' projections are the embedding's (the head's stays its own, as
// the reference's train.py ties [False] + [True] * len(cutoffs)).
//
// Parameters it registers: weight_<i> (untied output matrices), bias_<i> [rows of matrix i],
// projection_<i> (untied projections), cluster_weight [C, d_embed] and cluster_bias [C] with
// C > 0 tail clusters. Results are fp32 whatever the autocast dtype of the products (fp64 for fp64
// parameters, as in gradient checks).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "mixseq/nn/adaptive_clusters.h"
#include "mixseq/nn/adaptive_embedding.h"

namespace mixseq {

struct ProjectedAdaptiveLogSoftmaxOptions {
  AdaptiveClusters clusters;  // the split of the vocabulary (the same as the embedding's when tied)
  bool tie_weight = false;    // output vectors are the embedding's matrices (needs the embedding)
  bool tie_projs = false;     // tail clusters' projections are the embedding's (needs the embedding)
};

class ProjectedAdaptiveLogSoftmaxImpl : public torch::nn::Module {
 public:
  // `embedding` is needed when anything is tied and must split the vocabulary the same way; the
  // tied tensors are read from it at every call. Throws mixseq::Error otherwise.
  explicit ProjectedAdaptiveLogSoftmaxImpl(const ProjectedAdaptiveLogSoftmaxOptions& options,
                                           AdaptiveEmbedding embedding = nullptr);

  // hidden [N, D], targets [N] int64 in [0, V) -> -log p(targets[n] | hidden[n]) [N] fp32, in the
  // targets' order (the reference's keep_order=True; its default returns them grouped by cluster),
  // 0 where a target is kPadId (text/vocabulary.h), as nn/token_nll.h's. Each cluster's term is
  // token_nll of its logits: no [N, V] log-probabilities (a twentieth of Transformer-XL's
  // evaluation segment at the bench shape, vocabulary 2,000, went to log_softmax with one
  // cluster), and with tail clusters no log-probabilities of the head or the tails either.
  torch::Tensor nll(const torch::Tensor& hidden, const torch::Tensor& targets);

  // hidden [N, D] -> log p(v | hidden[n]) for every word [N, V] fp32.
  torch::Tensor log_probs(const torch::Tensor& hidden);

  const AdaptiveClusters& clusters() const { return options_.clusters; }
  // The tensors in use, tied or not: output matrix i and its bias, and cluster i's projection
  // (undefined where there is none).
  const torch::Tensor& weight(int64_t matrix) const;
  const torch::Tensor& bias(int64_t matrix) const { return biases_[matrix]; }
  const torch::Tensor& projection(int64_t cluster) const;

 private:
  // Every cluster's output vectors and biases, [rows, width] and [rows]: matrix i, or with div_val
  // 1 the rows of matrix 0 (one split, so that backward assembles the matrix's gradient once
  // instead of a zeroed full-size copy per cluster), cluster_weight and cluster_bias appended for
  // the head.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> cluster_layers() const;
  // hidden [N, D] through cluster i's projection and output vectors `weight` [rows, width] ->
  // its logits [N, rows], without the bias (token_nll adds it as it reads them).
  torch::Tensor cluster_logits(int64_t cluster, const torch::Tensor& weight, const torch::Tensor& hidden) const;
  // hidden [N, D] -> cluster i's log-probabilities [N, rows] fp32 (fp64 for fp64 parameters).
  torch::Tensor cluster_log_probs(int64_t cluster, const std::pair<torch::Tensor, torch::Tensor>& layer,
                                  const torch::Tensor& hidden) const;

  ProjectedAdaptiveLogSoftmaxOptions options_;
  AdaptiveEmbedding embedding_;              // not registered: the model owns it
  std::vector<torch::Tensor> weights_;       // weight_<i>, undefined where tied
  std::vector<torch::Tensor> biases_;        // bias_<i>
  std::vector<torch::Tensor> projections_;   // projection_<i>, undefined where tied or absent
  torch::Tensor cluster_weight_;             // [C, d_embed], undefined without tail clusters
  torch::Tensor cluster_bias_;               // [C]
};
TORCH_MODULE(ProjectedAdaptiveLogSoftmax);

}  // namespace mixseq
