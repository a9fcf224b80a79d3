#include "mixseq/models/fconv.h"

#include <ATen/ATen.h>
#include <torch/nn/init.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <utility>

#include "mixseq/nn/glu_convolution.h"
#include "mixseq/nn/grad_multiply.h"
#include "mixseq/nn/hashed_dropout.h"
#include "mixseq/nn/batched_matmul.h"
#include "mixseq/nn/cpu_float_linear.h"
#include "mixseq/nn/padding_mask.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"

namespace mixseq {

FconvConfig FconvConfig::iwslt_de_en() { return FconvConfig{}; }

FconvConfig FconvConfig::wmt_en_de() {
  FconvConfig config;
  // fairseq's fconv_wmt_en_de: 9 layers of 512, 4 of 1024, then two 1x1 convolutions of 2048.
  const std::string layers = "[(512, 3)] * 9 + [(1024, 3)] * 4 + [(2048, 1)] * 2";
  config.encoder_embed_dim = config.decoder_embed_dim = 768;
  config.encoder_layers = config.decoder_layers = layers;
  config.decoder_out_embed_dim = 512;
  return config;
}

FconvConfig FconvConfig::en_de_convs2s() {
  FconvConfig config = wmt_en_de();
  // OpenSeq2Seq's example_configs/text2text/en-de/en-de-convs2s-8-gpu.py: the same layers (its
  // "fairseq config"), d_model 512 for the embeddings and the output, shared_embed, keep
  // probability 0.8 everywhere.
  config.encoder_embed_dim = config.decoder_embed_dim = config.decoder_out_embed_dim = 512;
  config.share_all_embeddings = true;
  config.dropout = 0.2;
  return config;
}

namespace {

// Gehring et al. 2017, §3.4: a residual sum, or an attention's output added to its input, is
// scaled by sqrt(0.5) to keep the variance of the sum that of each part.
const double kSqrtHalf = std::sqrt(0.5);

// A recursive-descent reader of fairseq's layer expressions (which fairseq itself eval()s).
class SpecReader {
 public:
  SpecReader(const std::string& text, const std::string& key) : text_(text), key_(key) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(str_cat(key_, ": ", what, " at character ", pos_ + 1, " of \"", text_,
                        "\"; expected fairseq's form, e.g. \"[(256, 3)] * 4\" or \"[(512, 3)] * 9 + [(2048, 1)] * 2\""));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(str_cat("expected '", std::string(1, c), "'"));
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }
  int64_t integer() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (start == pos_ || pos_ - start > 9) fail("expected a non-negative integer");
    return std::stoll(text_.substr(start, pos_ - start));
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair<const char*, bool>{"True", true}, {"False", false}}) {
      const std::string w = word;
      if (text_.compare(pos_, w.size(), w) == 0) return pos_ += w.size(), value;
    }
    fail("expected True or False");
  }

  // list ['*' n] ('+' list ['*' n])*
  std::vector<FconvLayerSpec> layers() {
    std::vector<FconvLayerSpec> all;
    do {
      auto list = layer_list();
      int64_t repeat = 1;
      if (accept('*')) repeat = integer();
      for (int64_t i = 0; i < repeat; ++i) all.insert(all.end(), list.begin(), list.end());
    } while (accept('+'));
    if (!at_end()) fail("unexpected text");
    return all;
  }

 private:
  std::vector<FconvLayerSpec> layer_list() {
    std::vector<FconvLayerSpec> list;
    expect('[');
    if (accept(']')) return list;
    do {
      if (!list.empty() && accept(']')) return list;  // a trailing comma
      expect('(');
      FconvLayerSpec spec;
      spec.channels = integer();
      expect(',');
      spec.kernel_width = integer();
      if (!accept(',')) {
        expect(')');
      } else if (!accept(')')) {  // (channels, kernel, residual), or a trailing comma
        spec.residual = integer();
        accept(',');
        expect(')');
      }
      if (spec.channels <= 0 || spec.kernel_width <= 0) fail("channels and kernel width must be positive");
      list.push_back(spec);
    } while (accept(','));
    expect(']');
    return list;
  }

  const std::string& text_;
  const std::string& key_;
  size_t pos_ = 0;
};

void check_residuals(const std::vector<FconvLayerSpec>& layers, const std::string& key) {
  MIXSEQ_CHECK(!layers.empty(), key, " has no layers; fconv needs at least one convolution");
  for (size_t i = 0; i < layers.size(); ++i) {
    MIXSEQ_CHECK(layers[i].residual >= 0 && static_cast<size_t>(layers[i].residual) <= i + 1, key, ": layer ", i + 1,
                 " takes its residual from ", layers[i].residual, " layers back, but only ", i + 1,
                 " outputs (the input projection's and the earlier layers') come before it");
  }
}

torch::nn::Embedding make_embedding(int64_t rows, int64_t dim) {
  // fairseq's fconv Embedding() and PositionalEmbedding(): N(0, 0.1), <pad>'s row 0.
  torch::nn::Embedding embedding(torch::nn::EmbeddingOptions(rows, dim).padding_idx(kPadId));
  torch::NoGradGuard no_grad;
  embedding->weight.normal_(0.0, 0.1);
  embedding->weight[kPadId].zero_();
  return embedding;
}

WeightNormLinear make_linear(int64_t in, int64_t out, double dropout = 0.0) {
  return WeightNormLinear(WeightNormLinearOptions{in, out, dropout});
}

// The channels of each layer's residual: the projection it needs (or none).
WeightNormLinear make_projection(const std::vector<int64_t>& widths, const FconvLayerSpec& spec) {
  if (spec.residual == 0) return WeightNormLinear(nullptr);
  const int64_t residual_width = widths[widths.size() - static_cast<size_t>(spec.residual)];
  return residual_width == spec.channels ? WeightNormLinear(nullptr) : make_linear(residual_width, spec.channels);
}

// The residual of a layer whose input is outputs.back(), projected to its width; undefined for none.
torch::Tensor residual_of(const std::vector<torch::Tensor>& outputs, const FconvLayerSpec& spec,
                          WeightNormLinear& projection) {
  if (spec.residual == 0) return {};
  const auto& residual = outputs[outputs.size() - static_cast<size_t>(spec.residual)];
  return projection ? projection(residual) : residual;
}

class FconvEncoderLayerImpl : public torch::nn::Module {
 public:
  FconvEncoderLayerImpl(int64_t in_channels, const FconvLayerSpec& spec, const std::vector<int64_t>& widths,
                        double dropout)
      : spec_(spec),
        conv_(register_module("conv", GluConvolution(GluConvolutionOptions{in_channels, spec.channels,
                                                                           spec.kernel_width, dropout}))),
        projection_(make_projection(widths, spec)) {
    if (projection_) register_module("projection", projection_);
  }

  // outputs: fc1's and every earlier layer's, each [S, B, C_i]; pad [S, B, 1] -> [S, B, C]
  torch::Tensor forward(const std::vector<torch::Tensor>& outputs, const torch::Tensor& pad, double dropout) {
    const auto residual = residual_of(outputs, spec_, projection_);
    auto x = hashed_dropout(outputs.back().masked_fill(pad, 0.0), dropout, is_training());  // [S, B, C_in]
    const int64_t k = spec_.kernel_width;
    // fairseq pads even kernels by one more frame on the right than on the left.
    x = conv_->forward_padded(x, (k - 1) / 2, k / 2);  // [S, B, C]
    return residual.defined() ? (x + residual) * kSqrtHalf : x;  // [S, B, C]
  }

 private:
  FconvLayerSpec spec_;
  GluConvolution conv_;
  WeightNormLinear projection_;
};
TORCH_MODULE(FconvEncoderLayer);

// a [B, M, K] b [B, K, N] -> [B, M, N] through nn/batched_matmul.h: each sentence's matrices in
// place, spread over the threads (LibTorch's CPU bmm multiplies them one after another, each
// through a select and a one-thread BLAS call: 7.5 ms of a 186 ms bench training step).
torch::Tensor sentence_products(const torch::Tensor& a, const torch::Tensor& b) {
  return batched_matmul(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0);
}

// Gehring et al. 2017, §3.3: one decoder layer's attention over the encoder output.
class FconvAttentionImpl : public torch::nn::Module {
 public:
  FconvAttentionImpl(int64_t conv_channels, int64_t embed_dim)
      : in_projection_(register_module("in_projection", make_linear(conv_channels, embed_dim))),
        out_projection_(register_module("out_projection", make_linear(embed_dim, conv_channels))) {}

  // h [B, T, C], target embedding [B, T, E] -> h' [B, T, C], weights [B, T, S]
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& h, const torch::Tensor& target_embedding,
                                                  const FconvState& state) {
    const auto d = (in_projection_(h) + target_embedding) * kSqrtHalf;                   // [B, T, E]
    auto scores = sentence_products(d, state.encoder_keys.to(d.scalar_type())).to(at::kFloat);  // [B, T, S]
    scores = scores.masked_fill(state.pad_mask.unsqueeze(1), -std::numeric_limits<float>::infinity());
    const auto weights = at::softmax(scores, -1);                                        // [B, T, S]
    const auto values = state.encoder_values.to(d.scalar_type());                        // [B, S, E]
    // The sum over S positions of values of variance 1 has variance S: sqrt(S) scales it back
    // (the paper's m sqrt(1/m)), counting only the sentence's own positions.
    const auto context =
        sentence_products(weights.to(values.scalar_type()), values) * state.attention_scale;  // [B, T, E]
    return {(out_projection_(context) + h) * kSqrtHalf, weights};  // [B, T, C], [B, T, S]
  }

 private:
  WeightNormLinear in_projection_;
  WeightNormLinear out_projection_;
};
TORCH_MODULE(FconvAttention);

class FconvDecoderLayerImpl : public torch::nn::Module {
 public:
  FconvDecoderLayerImpl(int64_t in_channels, const FconvLayerSpec& spec, const std::vector<int64_t>& widths,
                        bool attention, int64_t embed_dim, double dropout)
      : spec_(spec),
        conv_(register_module("conv", GluConvolution(GluConvolutionOptions{in_channels, spec.channels,
                                                                           spec.kernel_width, dropout}))),
        attention_(attention ? register_module("attention", FconvAttention(spec.channels, embed_dim))
                             : FconvAttention(nullptr)),
        projection_(make_projection(widths, spec)) {
    if (projection_) register_module("projection", projection_);
  }

  bool has_attention() const { return !attention_.is_empty(); }

  // outputs: fc1's and every earlier layer's, each [T, B, C_i]; history: this layer's last K - 1
  // inputs [K - 1, B, C_in] (zeros before the first position), replaced by the new last K - 1.
  // -> [T, B, C], and the attention weights [B, T, S] (undefined without attention)
  std::pair<torch::Tensor, torch::Tensor> forward(const std::vector<torch::Tensor>& outputs,
                                                  const torch::Tensor& target_embedding, FconvState& state,
                                                  torch::Tensor& history, double dropout) {
    const auto residual = residual_of(outputs, spec_, projection_);
    auto x = hashed_dropout(outputs.back(), dropout, is_training());  // [T, B, C_in]
    const int64_t k = spec_.kernel_width, length = x.size(0);
    // A causal convolution: position t sees inputs t - K + 1 .. t, the first ones from the history.
    if (k == 1) {
      x = conv_(x, 0);  // [T, B, C]
    } else if (!history.defined()) {  // a sentence's start (training, scoring, a search's first step)
      const auto full = length >= k - 1 ? x : at::constant_pad_nd(x, {0, 0, 0, 0, k - 1 - length, 0});
      history = full.narrow(0, full.size(0) - (k - 1), k - 1);  // [K - 1, B, C_in]
      x = conv_->forward_padded(x, k - 1, 0);                      // [T, B, C]
    } else {
      x = at::cat({history.to(x.scalar_type()), x}, 0);  // [K - 1 + T, B, C_in]
      history = x.narrow(0, length, k - 1);               // [K - 1, B, C_in]
      x = conv_(x, 0);                                    // [T, B, C]
    }
    torch::Tensor weights;
    if (has_attention()) {
      auto [y, w] = attention_(x.transpose(0, 1), target_embedding, state);  // [B, T, C], [B, T, S]
      x = y.transpose(0, 1);                                                  // [T, B, C]
      weights = w;
    }
    return {residual.defined() ? (x + residual) * kSqrtHalf : x, weights};  // [T, B, C]
  }

 private:
  FconvLayerSpec spec_;
  GluConvolution conv_;
  FconvAttention attention_;
  WeightNormLinear projection_;
};
TORCH_MODULE(FconvDecoderLayer);

struct CheckedConfig {
  std::vector<FconvLayerSpec> encoder_layers;
  std::vector<FconvLayerSpec> decoder_layers;
  std::vector<bool> attention;
  int64_t attention_layers = 0;
};

// Checks the whole config before any module is built.
CheckedConfig check_config(const FconvConfig& config, int64_t vocab_size) {
  MIXSEQ_CHECK(config.encoder_embed_dim > 0, "model.fconv.encoder_embed_dim must be positive, got ",
               config.encoder_embed_dim);
  MIXSEQ_CHECK(config.decoder_embed_dim > 0, "model.fconv.decoder_embed_dim must be positive, got ",
               config.decoder_embed_dim);
  MIXSEQ_CHECK(config.decoder_out_embed_dim > 0, "model.fconv.decoder_out_embed_dim must be positive, got ",
               config.decoder_out_embed_dim);
  MIXSEQ_CHECK(config.dropout >= 0.0 && config.dropout < 1.0, "model.fconv.dropout must be in [0, 1), got ",
               config.dropout, "; 0 disables it");
  MIXSEQ_CHECK(config.max_positions >= 2, "model.fconv.max_positions must be at least 2 (row 0 is padding's), got ",
               config.max_positions);
  MIXSEQ_CHECK(!config.share_input_output_embed || config.decoder_out_embed_dim == config.decoder_embed_dim,
               "model.fconv.share_input_output_embed needs model.fconv.decoder_out_embed_dim (",
               config.decoder_out_embed_dim, ") equal to model.fconv.decoder_embed_dim (", config.decoder_embed_dim,
               ")");
  MIXSEQ_CHECK(!config.share_all_embeddings || (config.encoder_embed_dim == config.decoder_embed_dim &&
                                                 config.decoder_out_embed_dim == config.decoder_embed_dim),
               "model.fconv.share_all_embeddings needs one width for model.fconv.encoder_embed_dim (",
               config.encoder_embed_dim, "), decoder_embed_dim (", config.decoder_embed_dim,
               ") and decoder_out_embed_dim (", config.decoder_out_embed_dim, ")");
  MIXSEQ_CHECK(vocab_size >= kSpecialSymbolCount, "fconv vocabulary size must be at least ", kSpecialSymbolCount,
               " (<pad> <unk> <s> </s>), got ", vocab_size);
  CheckedConfig checked;
  checked.encoder_layers = parse_fconv_layers(config.encoder_layers, "model.fconv.encoder_layers");
  checked.decoder_layers = parse_fconv_layers(config.decoder_layers, "model.fconv.decoder_layers");
  checked.attention =
      parse_fconv_attention(config.decoder_attention, checked.decoder_layers.size(), "model.fconv.decoder_attention");
  for (const bool a : checked.attention) checked.attention_layers += a ? 1 : 0;
  MIXSEQ_CHECK(checked.attention_layers > 0, "model.fconv.decoder_attention (\"", config.decoder_attention,
               "\") gives no decoder layer attention: the decoder would never read the source");
  return checked;
}

torch::nn::ModuleList make_encoder_layers(const FconvConfig& config, const std::vector<FconvLayerSpec>& specs) {
  torch::nn::ModuleList layers;
  std::vector<int64_t> widths = {specs.front().channels};  // fc1's output, then each layer's
  for (const auto& spec : specs) {
    layers->push_back(FconvEncoderLayer(widths.back(), spec, widths, config.dropout));
    widths.push_back(spec.channels);
  }
  return layers;
}

torch::nn::ModuleList make_decoder_layers(const FconvConfig& config, const CheckedConfig& checked) {
  torch::nn::ModuleList layers;
  const auto& specs = checked.decoder_layers;
  std::vector<int64_t> widths = {specs.front().channels};
  for (size_t i = 0; i < specs.size(); ++i) {
    layers->push_back(FconvDecoderLayer(widths.back(), specs[i], widths, checked.attention[i],
                                        config.decoder_embed_dim, config.dropout));
    widths.push_back(specs[i].channels);
  }
  return layers;
}

}  // namespace

std::vector<FconvLayerSpec> parse_fconv_layers(const std::string& text, const std::string& key) {
  auto layers = SpecReader(text, key).layers();
  check_residuals(layers, key);
  return layers;
}

std::vector<bool> parse_fconv_attention(const std::string& text, size_t layers, const std::string& key) {
  SpecReader reader(text, key);
  std::vector<bool> flags;
  if (reader.accept('[')) {
    if (!reader.accept(']')) {
      do flags.push_back(reader.boolean());
      while (reader.accept(','));
      reader.expect(']');
    }
    MIXSEQ_CHECK(flags.size() == layers, key, " lists ", flags.size(), " flags for ", layers,
                 " decoder layers; give one per layer, or True or False for all");
  } else {
    flags.assign(layers, reader.boolean());
  }
  if (!reader.at_end()) reader.fail("unexpected text");
  return flags;
}

void FconvState::select_within_sources(const torch::Tensor& rows) {
  const auto index = rows.to(pad_mask.device());
  for (auto& history : conv_inputs)
    if (history.defined()) history = history.index_select(1, index);  // [K - 1, B', C]
}

void FconvState::select(const torch::Tensor& rows) {
  select_within_sources(rows);
  const auto index = rows.to(pad_mask.device());            // [B']
  encoder_keys = encoder_keys.index_select(0, index);        // [B', E, S]
  encoder_values = encoder_values.index_select(0, index);    // [B', S, E]
  pad_mask = pad_mask.index_select(0, index);                // [B', S]
  attention_scale = attention_scale.index_select(0, index);  // [B', 1, 1]
}

FconvModelImpl::FconvModelImpl(const FconvConfig& config, int64_t vocab_size)
    : vocab_size_(vocab_size), max_positions_(config.max_positions), dropout_(config.dropout) {
  const auto checked = check_config(config, vocab_size);
  attention_layers_ = checked.attention_layers;
  const int64_t source_dim = config.encoder_embed_dim, target_dim = config.decoder_embed_dim;
  // share_all_embeddings: one token table and one position table, registered once (so that each
  // parameter is optimized and saved once) and used by both sides.
  const bool shared = config.share_all_embeddings;
  encoder_embedding_ =
      register_module(shared ? "embedding" : "encoder_embedding", make_embedding(vocab_size, source_dim));
  encoder_positions_ =
      register_module(shared ? "positions" : "encoder_positions", make_embedding(config.max_positions, source_dim));
  encoder_fc1_ = register_module(
      "encoder_fc1", make_linear(source_dim, checked.encoder_layers.front().channels, config.dropout));
  encoder_layers_ = register_module("encoder_layers", make_encoder_layers(config, checked.encoder_layers));
  encoder_fc2_ = register_module("encoder_fc2", make_linear(checked.encoder_layers.back().channels, source_dim));
  decoder_embedding_ =
      shared ? encoder_embedding_ : register_module("decoder_embedding", make_embedding(vocab_size, target_dim));
  decoder_positions_ = shared ? encoder_positions_
                              : register_module("decoder_positions", make_embedding(config.max_positions, target_dim));
  decoder_fc1_ = register_module(
      "decoder_fc1", make_linear(target_dim, checked.decoder_layers.front().channels, config.dropout));
  decoder_layers_ = register_module("decoder_layers", make_decoder_layers(config, checked));
  decoder_fc2_ = register_module("decoder_fc2",
                                 make_linear(checked.decoder_layers.back().channels, config.decoder_out_embed_dim));
  if (shared) {
    // OpenSeq2Seq: logits = output · tableᵀ (EmbeddingSharedWeights.linear), no bias.
  } else if (config.share_input_output_embed) {
    // fairseq: an nn.Linear whose weight is the embedding's; its bias keeps nn.Linear's init.
    const double bound = 1.0 / std::sqrt(static_cast<double>(config.decoder_out_embed_dim));
    output_bias_ = register_parameter("decoder_output_bias", at::empty({vocab_size}).uniform_(-bound, bound));
  } else {
    decoder_fc3_ = register_module("decoder_fc3", make_linear(config.decoder_out_embed_dim, vocab_size, config.dropout));
  }
}

FconvState FconvModelImpl::encode(const torch::Tensor& source, const torch::Tensor& source_lengths) {
  MIXSEQ_CHECK(source.dim() == 2 && source_lengths.dim() == 1 && source_lengths.size(0) == source.size(0),
               "FconvModel: source must be [B, S] and source_lengths [B], got ", source.sizes(), " and ",
               source_lengths.sizes());
  const int64_t length = source.size(1);
  MIXSEQ_CHECK(length < max_positions_, "FconvModel: a source of ", length,
               " tokens needs more learned positions than model.fconv.max_positions (", max_positions_,
               ") gives (the longest sentence is max_positions - 1)");
  FconvState state;
  const auto lengths = source_lengths.to(source.device());
  state.pad_mask = padding_mask(lengths, length);  // [B, S]
  const auto keep = state.pad_mask.logical_not();  // [B, S]
  const auto positions = keep.cumsum(1) * keep;    // [B, S]: 1, 2, .. then 0 at padding
  const auto embedded = hashed_dropout(encoder_embedding_(source) + encoder_positions_(positions), dropout_,
                                       is_training());  // [B, S, E]
  const auto pad = state.pad_mask.t().unsqueeze(-1);    // [S, B, 1]
  std::vector<torch::Tensor> outputs = {encoder_fc1_(embedded).transpose(0, 1)};  // [S, B, C]
  for (size_t i = 0; i < encoder_layers_->size(); ++i)
    outputs.push_back(encoder_layers_->at<FconvEncoderLayerImpl>(i).forward(outputs, pad, dropout_));  // [S, B, C_i]
  auto z = encoder_fc2_(outputs.back().transpose(0, 1)).masked_fill(state.pad_mask.unsqueeze(-1), 0.0);  // [B, S, E]
  z = grad_multiply(z, 1.0 / (2.0 * static_cast<double>(attention_layers_)));
  state.encoder_values = (z + embedded) * kSqrtHalf;  // [B, S, E]
  state.encoder_keys = z.transpose(1, 2).contiguous();  // [B, E, S]
  state.attention_scale = lengths.to(at::kFloat).sqrt().view({-1, 1, 1});  // [B, 1, 1]
  state.conv_inputs.resize(decoder_layers_->size());
  return state;
}

std::tuple<torch::Tensor, torch::Tensor> FconvModelImpl::decode(const torch::Tensor& tokens, FconvState& state,
                                                                bool need_weights) {
  const int64_t length = tokens.size(1);
  MIXSEQ_CHECK(state.position + length < max_positions_, "FconvModel: target position ", state.position + length,
               " is past the learned positions of model.fconv.max_positions (", max_positions_, ")");
  const auto keep = tokens.ne(kPadId);                                   // [B, T]
  const auto positions = (keep.cumsum(1) + state.position) * keep;       // [B, T]
  const auto target_embedding = hashed_dropout(decoder_embedding_(tokens) + decoder_positions_(positions), dropout_,
                                               is_training());  // [B, T, E]
  std::vector<torch::Tensor> outputs = {decoder_fc1_(target_embedding).transpose(0, 1)};  // [T, B, C]
  torch::Tensor weights;                                                                  // [B, T, S]
  for (size_t i = 0; i < decoder_layers_->size(); ++i) {
    auto [x, w] = decoder_layers_->at<FconvDecoderLayerImpl>(i).forward(outputs, target_embedding, state,
                                                                        state.conv_inputs[i], dropout_);
    outputs.push_back(x);  // [T, B, C_i]
    if (need_weights && w.defined()) weights = weights.defined() ? weights + w : w;
  }
  state.position += length;
  auto y = hashed_dropout(decoder_fc2_(outputs.back().transpose(0, 1)), dropout_, is_training());  // [B, T, D_out]
  const auto logits = decoder_fc3_ ? decoder_fc3_(y) : float_linear_or_aten(y, decoder_embedding_->weight, output_bias_);
  if (weights.defined()) weights = weights / static_cast<double>(attention_layers_);
  return {logits, weights};  // [B, T, V], [B, T, S]
}

torch::Tensor FconvModelImpl::forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                                      const torch::Tensor& target_input) {
  auto state = encode(source, source_lengths);
  return std::get<0>(decode(target_input, state, /*need_weights=*/false));  // [B, T, V]
}

std::unique_ptr<IncrementalState> FconvModelImpl::start(const torch::Tensor& source,
                                                        const torch::Tensor& source_lengths) {
  return std::make_unique<FconvState>(encode(source, source_lengths));
}

DecoderStep FconvModelImpl::step(IncrementalState& state, const torch::Tensor& tokens) {
  auto* fconv_state = dynamic_cast<FconvState*>(&state);
  MIXSEQ_CHECK(fconv_state != nullptr, "FconvModel::step needs the state FconvModel::start returned");
  auto [logits, weights] = decode(tokens.unsqueeze(1), *fconv_state, state.report_attention);  // [B, 1, V], [B, 1, S]
  return {logits.squeeze(1), weights.defined() ? weights.squeeze(1) : weights};               // [B, V], [B, S]
}

}  // namespace mixseq
