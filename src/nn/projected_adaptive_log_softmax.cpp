#include "mixseq/nn/projected_adaptive_log_softmax.h"

#include <ATen/ATen.h>

#include <string>

#include "mixseq/nn/linear_product.h"
#include "mixseq/nn/token_nll.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

bool same_split(const AdaptiveClusters& a, const AdaptiveClusters& b) {
  return a.vocab_size == b.vocab_size && a.embed_dim == b.embed_dim && a.proj_dim == b.proj_dim &&
         a.cutoffs == b.cutoffs && a.div_val == b.div_val;
}

// hidden [N, D] through a cluster's projection [D, width] (undefined: none) -> [N, width].
torch::Tensor project_hidden(const torch::Tensor& projection, const torch::Tensor& hidden) {
  return projection.defined() ? linear_product(hidden, projection.t()) : hidden;
}

const ProjectedAdaptiveLogSoftmaxOptions& checked(const ProjectedAdaptiveLogSoftmaxOptions& options,
                                                  const AdaptiveEmbedding& embedding) {
  options.clusters.check("ProjectedAdaptiveLogSoftmax");
  if (options.tie_weight || options.tie_projs) {
    MIXSEQ_CHECK(!embedding.is_empty(), "ProjectedAdaptiveLogSoftmax: tie_weight and tie_projs need the embedding ",
                 "to tie to");
    MIXSEQ_CHECK(same_split(options.clusters, embedding->clusters()), "ProjectedAdaptiveLogSoftmax: tied to an ",
                 "embedding that splits the vocabulary differently (sizes, cutoffs or div_val differ)");
  }
  return options;
}

}  // namespace

ProjectedAdaptiveLogSoftmaxImpl::ProjectedAdaptiveLogSoftmaxImpl(const ProjectedAdaptiveLogSoftmaxOptions& options,
                                                                 AdaptiveEmbedding embedding)
    : options_(checked(options, embedding)), embedding_(std::move(embedding)) {
  const auto& clusters = options_.clusters;
  const int64_t matrices = clusters.matrix_count();
  for (int64_t i = 0; i < matrices; ++i) {
    const auto name = std::to_string(i);
    const int64_t rows = matrices == 1 ? clusters.vocab_size : clusters.size(i);
    weights_.push_back(options_.tie_weight ? torch::Tensor()
                                           : register_parameter("weight_" + name, at::empty({rows, clusters.dim(i)})));
    biases_.push_back(register_parameter("bias_" + name, at::zeros({rows})));
  }
  for (int64_t i = 0; i < clusters.count(); ++i) {
    const bool own = clusters.projected() && !(options_.tie_projs && i > 0);
    const int64_t width = clusters.dim(matrices == 1 ? 0 : i);
    projections_.push_back(own ? register_parameter("projection_" + std::to_string(i),
                                                    at::empty({clusters.proj_dim, width}))
                               : torch::Tensor());
  }
  const int64_t tails = clusters.count() - 1;
  if (tails > 0) {
    cluster_weight_ = register_parameter("cluster_weight", at::empty({tails, clusters.embed_dim}));
    cluster_bias_ = register_parameter("cluster_bias", at::zeros({tails}));
  }
  // The reference's train.py defaults (weights_init with init normal, init_std 0.02, proj_init_std 0.01).
  torch::NoGradGuard no_grad;
  for (auto& weight : weights_)
    if (weight.defined()) weight.normal_(0.0, 0.02);
  for (auto& projection : projections_)
    if (projection.defined()) projection.normal_(0.0, 0.01);
  if (cluster_weight_.defined()) cluster_weight_.normal_(0.0, 0.02);
}

const torch::Tensor& ProjectedAdaptiveLogSoftmaxImpl::weight(int64_t matrix) const {
  return options_.tie_weight ? embedding_->weight(matrix) : weights_[matrix];
}

const torch::Tensor& ProjectedAdaptiveLogSoftmaxImpl::projection(int64_t cluster) const {
  const auto& clusters = options_.clusters;
  if (clusters.projected() && options_.tie_projs && cluster > 0)
    return embedding_->projection(clusters.matrix_count() == 1 ? 0 : cluster);
  return projections_[cluster];
}

std::vector<std::pair<torch::Tensor, torch::Tensor>> ProjectedAdaptiveLogSoftmaxImpl::cluster_layers() const {
  const auto& clusters = options_.clusters;
  std::vector<torch::Tensor> weights, biases;  // per cluster: [rows, width], [rows]
  if (clusters.matrix_count() > 1) {
    for (int64_t i = 0; i < clusters.count(); ++i) weights.push_back(weight(i)), biases.push_back(biases_[i]);
  } else if (clusters.count() == 1) {
    weights = {weight(0)}, biases = {biases_[0]};
  } else {
    std::vector<int64_t> sizes;
    for (int64_t i = 0; i < clusters.count(); ++i) sizes.push_back(clusters.size(i));
    weights = weight(0).split_with_sizes(sizes);
    biases = biases_[0].split_with_sizes(sizes);
  }
  if (clusters.count() > 1) {
    weights[0] = at::cat({weights[0], cluster_weight_});  // [S + C, d_embed]
    biases[0] = at::cat({biases[0], cluster_bias_});      // [S + C]
  }
  std::vector<std::pair<torch::Tensor, torch::Tensor>> layers;
  for (size_t i = 0; i < weights.size(); ++i) layers.emplace_back(weights[i], biases[i]);
  return layers;
}

torch::Tensor ProjectedAdaptiveLogSoftmaxImpl::cluster_logits(int64_t cluster, const torch::Tensor& weight,
                                                              const torch::Tensor& hidden) const {
  return linear_product(project_hidden(projection(cluster), hidden), weight);  // [N, rows], no bias
}

torch::Tensor ProjectedAdaptiveLogSoftmaxImpl::cluster_log_probs(int64_t cluster,
                                                                 const std::pair<torch::Tensor, torch::Tensor>& layer,
                                                                 const torch::Tensor& hidden) const {
  const auto logits =
      linear_product(project_hidden(projection(cluster), hidden), layer.first, layer.second);  // [N, rows]
  return at::log_softmax(logits, -1, logits.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
}

torch::Tensor ProjectedAdaptiveLogSoftmaxImpl::nll(const torch::Tensor& hidden, const torch::Tensor& targets) {
  MIXSEQ_CHECK(hidden.dim() == 2 && targets.dim() == 1 && hidden.size(0) == targets.size(0),
               "ProjectedAdaptiveLogSoftmax: hidden must be [N, D] and targets [N], got ", hidden.sizes(), " and ",
               targets.sizes());
  const auto& clusters = options_.clusters;
  const auto layers = cluster_layers();
  if (clusters.count() == 1) {  // one softmax: the NLL straight from the logits (nn/token_nll.h)
    return token_nll(cluster_logits(0, layers[0].first, hidden), targets, layers[0].second);  // [N]
  }
  // Each target's cluster (0 = head) and its column in the head: its own, or head_size - i for
  // cluster i. -log p(target) = -log p_head(column) - log p_i(target | cluster i), each term
  // straight from its logits and bias in one pass (nn/token_nll.h): no [N, S + C] or [N_i, size_i]
  // log-probabilities, and under bf16 autocast no widened copies of the logits. Columns are not
  // token ids, so nothing is ignored there; rows whose target is <pad> are zeroed at the end.
  const int64_t head_width = layers[0].first.size(0);  // S + C
  const auto cutoffs = at::tensor(clusters.cutoffs, targets.options());
  const auto cluster = at::bucketize(targets, cutoffs, /*out_int32=*/false, /*right=*/true);  // [N]
  const auto column = at::where(cluster == 0, targets, head_width - cluster);                 // [N]
  auto nll = token_nll(cluster_logits(0, layers[0].first, hidden), column, layers[0].second,
                       /*ignore_index=*/-1);  // [N]
  for (int64_t i = 1; i < clusters.count(); ++i) {
    const auto rows = (cluster == i).nonzero().squeeze(1);  // [N_i]
    if (rows.numel() == 0) continue;
    const auto words = targets.index_select(0, rows) - clusters.begin(i);  // [N_i]
    const auto tail = token_nll(cluster_logits(i, layers[i].first, hidden.index_select(0, rows)), words,
                                layers[i].second, /*ignore_index=*/-1);  // [N_i]
    nll = nll.index_add(0, rows, tail.to(nll.scalar_type()));
  }
  return nll.masked_fill(targets == kPadId, 0.0);  // [N], as token_nll's
}

torch::Tensor ProjectedAdaptiveLogSoftmaxImpl::log_probs(const torch::Tensor& hidden) {
  MIXSEQ_CHECK(hidden.dim() == 2, "ProjectedAdaptiveLogSoftmax: hidden must be [N, D], got ", hidden.sizes());
  const auto& clusters = options_.clusters;
  const auto layers = cluster_layers();
  const auto head = cluster_log_probs(0, layers[0], hidden);  // [N, S + C]
  if (clusters.count() == 1) return head;                     // [N, V]
  std::vector<torch::Tensor> parts = {head.narrow(1, 0, clusters.size(0))};
  for (int64_t i = 1; i < clusters.count(); ++i)
    parts.push_back(head.narrow(1, head.size(1) - i, 1) + cluster_log_probs(i, layers[i], hidden));  // [N, size_i]
  return at::cat(parts, 1);  // [N, V]
}

}  // namespace mixseq
