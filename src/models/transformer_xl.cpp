#include "mixseq/models/transformer_xl.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <string>

#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/relative_positional_embedding.h"
#include "mixseq/nn/transformer_xl_layer.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

const char* const kOwner = "model.transformer_xl";

void check_context(const LmContext& context) {
  MIXSEQ_CHECK(context.mem_len >= 0, kOwner, ".mem_len must be at least 0 (0 = no memory), got ", context.mem_len);
  MIXSEQ_CHECK(context.clamp_len >= -1, kOwner, ".clamp_len must be -1 (no clamping) or positive, got ",
               context.clamp_len);
  MIXSEQ_CHECK(!context.same_length || context.mem_len > 0, kOwner, ".same_length needs mem_len > 0: it limits ",
               "every query to the last mem_len keys, and with mem_len 0 no query would see any");
}

LmContext context_of(const TransformerXlConfig& config) { return {config.mem_len, config.clamp_len, config.same_length}; }

AdaptiveClusters clusters_of(const TransformerXlConfig& config, int64_t vocab_size) {
  AdaptiveClusters clusters;
  clusters.vocab_size = vocab_size;
  clusters.embed_dim = config.d_embed == 0 ? config.d_model : config.d_embed;
  clusters.proj_dim = config.d_model;
  clusters.cutoffs = config.cutoffs;
  clusters.div_val = config.div_val;
  return clusters;
}

// Checks the whole config before any module is built (a bad size would otherwise surface as a
// LibTorch shape error); returns vocab_size.
int64_t checked_vocab_size(const TransformerXlConfig& config, int64_t vocab_size) {
  const auto positive = [](const char* key, int64_t value) {
    MIXSEQ_CHECK(value > 0, kOwner, ".", key, " must be positive, got ", value);
  };
  positive("n_layer", config.n_layer);
  positive("d_model", config.d_model);
  positive("n_head", config.n_head);
  positive("d_head", config.d_head);
  positive("d_inner", config.d_inner);
  MIXSEQ_CHECK(config.d_model % 2 == 0, kOwner, ".d_model must be even (half of the positional embedding holds ",
               "sines, half cosines), got ", config.d_model);
  for (const auto& [key, value] : {std::pair{"dropout", config.dropout}, std::pair{"dropatt", config.dropatt}})
    MIXSEQ_CHECK(value >= 0.0 && value < 1.0, kOwner, ".", key, " must be in [0, 1), got ", value, "; 0 disables it");
  MIXSEQ_CHECK(config.d_embed >= 0, kOwner, ".d_embed must be positive, or 0 for d_model; got ", config.d_embed);
  MIXSEQ_CHECK(config.init_range > 0.0 && config.init_std >= 0.0 && config.proj_init_std >= 0.0, kOwner,
               ": init_range must be positive and init_std, proj_init_std at least 0; got ", config.init_range, ", ",
               config.init_std, ", ", config.proj_init_std);
  check_context(context_of(config));
  clusters_of(config, vocab_size).check(kOwner);
  return vocab_size;
}

TransformerXlLayerOptions layer_options(const TransformerXlConfig& config) {
  TransformerXlLayerOptions options;
  options.d_model = config.d_model;
  options.n_head = config.n_head;
  options.d_head = config.d_head;
  options.d_inner = config.d_inner;
  options.dropout = config.dropout;
  options.dropatt = config.dropatt;
  options.pre_lnorm = config.pre_lnorm;
  return options;
}

torch::nn::ModuleList make_layers(const TransformerXlConfig& config) {
  torch::nn::ModuleList layers;
  for (int64_t i = 0; i < config.n_layer; ++i) layers->push_back(TransformerXlLayer(layer_options(config)));
  return layers;
}

ProjectedAdaptiveLogSoftmaxOptions softmax_options(const TransformerXlConfig& config, int64_t vocab_size) {
  ProjectedAdaptiveLogSoftmaxOptions options;
  options.clusters = clusters_of(config, vocab_size);
  options.tie_weight = config.tie_weight;
  options.tie_projs = config.tie_projs;
  return options;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// The reference's train.py weights_init, by what each parameter is (the registered names say it).
void initialize(torch::nn::Module& model, const TransformerXlConfig& config) {
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    const std::string leaf = name.substr(name.rfind('.') + 1);
    auto& p = item.value();
    if (starts_with(leaf, "projection_")) {
      p.normal_(0.0, config.proj_init_std);                 // AdaptiveEmbedding.emb_projs, out_projs
    } else if (name.find("layer_norm.") != std::string::npos) {
      leaf == "weight" ? p.normal_(1.0, config.init_std) : p.zero_();
    } else if (leaf == "bias" || starts_with(leaf, "bias_") || leaf == "cluster_bias") {
      p.zero_();                                            // Linear biases, the softmax's biases
    } else if (config.init == "uniform") {                  // Linear and embedding weights, output vectors,
      p.uniform_(-config.init_range, config.init_range);    // cluster_weight, r_w_bias, r_r_bias
    } else {
      p.normal_(0.0, config.init_std);
    }
  }
}

}  // namespace

TransformerXlModelImpl::TransformerXlModelImpl(const TransformerXlConfig& config, int64_t vocab_size,
                                               bool output_layer)
    : vocab_size_(checked_vocab_size(config, vocab_size)),
      d_model_(config.d_model),
      dropout_(config.dropout),
      context_(context_of(config)),
      embedding_(register_module("embedding", AdaptiveEmbedding(clusters_of(config, vocab_size)))),
      layers_(register_module("layers", make_layers(config))),
      r_w_bias_(register_parameter("r_w_bias", at::empty({config.n_head, config.d_head}))),
      r_r_bias_(register_parameter("r_r_bias", at::empty({config.n_head, config.d_head}))) {
  if (output_layer)
    softmax_ = register_module("softmax", ProjectedAdaptiveLogSoftmax(softmax_options(config, vocab_size), embedding_));
  initialize(*this, config);
}

std::vector<std::vector<torch::Tensor>> TransformerXlModelImpl::layer_groups() const {
  std::vector<std::vector<torch::Tensor>> groups;
  for (int64_t i = n_layer() - 1; i >= 0; --i) {
    auto group = layers_->ptr(static_cast<size_t>(i))->parameters();
    if (i == 0) {
      for (const auto& p : embedding_->parameters()) group.push_back(p);
      group.push_back(r_w_bias_);
      group.push_back(r_r_bias_);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

void TransformerXlModelImpl::set_context(const LmContext& context) {
  check_context(context);
  context_ = context;
}

torch::Tensor TransformerXlModelImpl::blocked_keys(int64_t segment_length, int64_t memory_length,
                                                   const torch::Device& device) const {
  const int64_t T = segment_length, M = memory_length, K = M + T;
  if (T == 1 && !context_.same_length) return {};  // one query, the last position: it sees every key
  const auto all = at::ones({T, K}, at::TensorOptions().dtype(at::kBool).device(device));
  auto blocked = all.triu(1 + M);  // [T, K]: keys after the query's own position
  if (context_.same_length) {
    // The reference's mask: keys more than mem_len positions back as well (as many as the
    // memory can fill; a memory shorter than mem_len shifts the band).
    const int64_t mask_len = K - context_.mem_len;
    const int64_t shift = mask_len > 0 ? T - mask_len : T;
    blocked = blocked.logical_or(all.tril(-shift));
  }
  return blocked;
}

std::pair<torch::Tensor, LmMemory> TransformerXlModelImpl::hidden_states(const torch::Tensor& tokens,
                                                                         const LmMemory& memory) {
  MIXSEQ_CHECK(softmax_, "TransformerXlModel: built without its output layer (a classifier's encoder), it gives no "
                         "probabilities; call encode()");
  auto [x, next] = encode(tokens, memory);
  return {hashed_dropout(x, dropout_, is_training()), std::move(next)};
}

std::pair<torch::Tensor, LmMemory> TransformerXlModelImpl::encode(const torch::Tensor& tokens, const LmMemory& memory) {
  MIXSEQ_CHECK(tokens.dim() == 2 && tokens.size(0) >= 1 && tokens.size(1) >= 1,
               "TransformerXlModel: tokens must be [B, T] with B, T >= 1, got ", tokens.sizes());
  const int64_t B = tokens.size(0), T = tokens.size(1), M = memory.length(), K = M + T;
  MIXSEQ_CHECK(memory.empty() || static_cast<int64_t>(memory.layers.size()) == n_layer(),
               "TransformerXlModel: the memory must hold one tensor per layer (", n_layer(), "), got ",
               memory.layers.size());
  for (const auto& layer : memory.layers)
    MIXSEQ_CHECK(layer.dim() == 3 && layer.size(0) == B && layer.size(1) == M && layer.size(2) == d_model_,
                 "TransformerXlModel: every memory tensor must be [B = ", B, ", M = ", M, ", D = ", d_model_,
                 "], got ", layer.sizes(), "; pass the memory that the previous segment of the same rows returned");
  const bool training = is_training();
  auto x = hashed_dropout(embedding_(tokens), dropout_, training);  // [B, T, D]
  const auto r = hashed_dropout(relative_positional_embedding(K, d_model_, context_.clamp_len, tokens.device()),
                                dropout_, training);                 // [K, D]
  const auto blocked = blocked_keys(T, M, tokens.device());  // [T, K]
  LmMemory next;
  const int64_t kept = std::min(K, context_.mem_len);
  // In evaluation the memory's keys and values are kept from the call that computed them
  // (LmMemory::reusable); in training the weights change at every step.
  const bool reuse = !training && !at::GradMode::is_enabled();
  for (int64_t i = 0; i < n_layer(); ++i) {
    auto& layer = layers_->at<TransformerXlLayerImpl>(i);
    torch::Tensor memory_key_value, key_value;  // [B, M, 2 H Dh], [B, K, 2 H Dh]
    if (reuse && M > 0 && static_cast<int64_t>(memory.reusable.size()) == n_layer()) {
      const auto& kept_before = memory.reusable[i];
      if (kept_before.source.is_same(memory.layers[i]) && kept_before.weights_version == layer.key_value_version())
        memory_key_value = kept_before.value;
    }
    // The layer reads [memory; x] unless the memory's keys and values are kept; the next memory is
    // its last `kept` positions, built from those alone then (all of them from x when kept <= T).
    torch::Tensor context;  // [B, K, D]
    const auto memory_of = [&](const torch::Tensor& layer_memory) { return layer_memory.to(x.scalar_type()); };
    if (!memory_key_value.defined()) context = M > 0 ? at::cat({memory_of(memory.layers[i]), x}, 1) : x;
    if (kept > 0) {
      torch::Tensor last;  // [B, kept, D]
      if (context.defined()) {
        last = context.narrow(1, K - kept, kept);
      } else if (kept <= T) {
        last = x.narrow(1, T - kept, kept);
      } else {
        last = at::cat({memory_of(memory.layers[i]).narrow(1, K - kept, kept - T), x}, 1);
      }
      next.layers.push_back(last.detach());
    }
    x = layer.forward(x, context, r, r_w_bias_, r_r_bias_, blocked, memory_key_value, reuse ? &key_value : nullptr);
    if (reuse && kept > 0)
      next.reusable.push_back({next.layers.back(), layer.key_value_version(), key_value.narrow(1, K - kept, kept)});
  }
  return {x, std::move(next)};
}

namespace {

void check_ids(const torch::Tensor& ids, int64_t vocab_size, const char* what) {
  const auto [low, high] = at::aminmax(ids);
  MIXSEQ_CHECK(low.item<int64_t>() >= 0 && high.item<int64_t>() < vocab_size, "TransformerXlModel: ", what,
               " must be ids in [0, ", vocab_size, "), got ", low.item<int64_t>(), " .. ", high.item<int64_t>());
}

}  // namespace

LmOutput TransformerXlModelImpl::forward(const torch::Tensor& tokens, const torch::Tensor& targets,
                                         const LmMemory& memory) {
  MIXSEQ_CHECK(targets.sizes() == tokens.sizes(), "TransformerXlModel: targets ", targets.sizes(),
               " must have the shape of tokens ", tokens.sizes());
  check_ids(tokens, vocab_size_, "tokens");
  check_ids(targets, vocab_size_, "targets");
  auto [hidden, next] = hidden_states(tokens, memory);                           // [B, T, D]
  const auto flat = hidden.reshape({-1, hidden.size(2)});                        // [B T, D]
  const auto nll = softmax_->nll(flat, targets.reshape({-1})).view(targets.sizes());  // [B, T]
  return {nll.masked_fill(targets == kPadId, 0.0), std::move(next), hidden};
}

LmLogProbs TransformerXlModelImpl::log_probs(const torch::Tensor& tokens, const LmMemory& memory) {
  check_ids(tokens, vocab_size_, "tokens");
  auto [hidden, next] = hidden_states(tokens, memory);                           // [B, T, D]
  const auto flat = hidden.reshape({-1, hidden.size(2)});                        // [B T, D]
  return {softmax_->log_probs(flat).view({tokens.size(0), tokens.size(1), vocab_size_}), std::move(next)};  // [B, T, V]
}

}  // namespace mixseq
