// How an adaptive input embedding (nn/adaptive_embedding.h; Baevski & Auli 2019) and an adaptive
// softmax (nn/projected_adaptive_log_softmax.h; Grave et al. 2017) split a vocabulary sorted by
// frequency: cutoffs c_1 < c_2 < ... cut the ids into clusters [0, c_1), [c_1, c_2), ...,
// [c_n, V). Cluster 0 (the head, the frequent words) has vectors of width embed_dim, cluster i
// of width embed_dim / div_val^i, each projected to or from the model width proj_dim. With
// div_val 1 one V x embed_dim matrix serves every cluster, and a projection exists only when
// embed_dim differs from proj_dim. This is the arithmetic of the reference's AdaptiveEmbedding
// and ProjectedAdaptiveLogSoftmax (kimiyoung/transformer-xl, pytorch/), kept in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mixseq {

struct AdaptiveClusters {
  int64_t vocab_size = 0;        // V
  int64_t embed_dim = 0;         // d_embed: the width of the head cluster's vectors
  int64_t proj_dim = 0;          // d_proj: the model width the vectors are projected to or from
  std::vector<int64_t> cutoffs;  // first ids of clusters 1, 2, ... (increasing, in (0, V)); empty: one cluster
  int64_t div_val = 1;           // cluster i's width is embed_dim / div_val^i; 1: one matrix for all clusters

  int64_t count() const { return static_cast<int64_t>(cutoffs.size()) + 1; }  // clusters, the head included
  int64_t begin(int64_t cluster) const;                                        // first id of `cluster`
  int64_t end(int64_t cluster) const;                                          // one past its last id
  int64_t size(int64_t cluster) const { return end(cluster) - begin(cluster); }
  int64_t dim(int64_t cluster) const;  // its vectors' width: embed_dim / div_val^cluster
  // Matrices of vectors: 1 when div_val is 1 (clusters are row ranges of it), else one per cluster.
  int64_t matrix_count() const { return div_val == 1 ? 1 : count(); }
  // Whether the matrices are projected: always when div_val > 1, else when embed_dim != proj_dim.
  bool projected() const { return div_val != 1 || embed_dim != proj_dim; }

  // Throws mixseq::Error naming `owner` (e.g. "model.transformer_xl") for sizes that do not work:
  // cutoffs not increasing in (0, V), a cluster narrower than 1, non-positive widths.
  void check(const std::string& owner) const;
};

}  // namespace mixseq
