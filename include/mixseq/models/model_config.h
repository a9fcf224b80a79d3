// ModelConfig: which architecture to build and its shape. The vocabulary size is not part of
// it: it comes from the data (or the checkpoint) the model is built for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/models/conv_ctc.h"
#include "mixseq/models/deepspeech2.h"
#include "mixseq/models/tacotron2.h"
#include "mixseq/util/config.h"

namespace mixseq {

// GNMT v2 as in NVIDIA's PyTorch GNMT example and the MLPerf reference (Wu et al. 2016).
struct GnmtConfig {
  int64_t hidden_size = 1024;     // LSTM units per layer (per direction in encoder layer 1) and embedding width
  int64_t num_layers = 4;         // LSTM layers in the encoder and in the decoder (at least 2)
  double dropout = 0.2;           // between layers; 0 disables
  bool share_embeddings = true;   // one embedding matrix for source and target (joint vocabulary)
  double init_range = 0.1;        // parameters start uniform in [-init_range, init_range]

  void visit(ConfigVisitor& v) {
    v.field("hidden_size", hidden_size, "LSTM units per layer and embedding width");
    v.field("num_layers", num_layers, "LSTM layers in encoder and decoder");
    v.field("dropout", dropout, "dropout between layers; 0 disables");
    v.field("share_embeddings", share_embeddings, "one embedding matrix for source and target");
    v.field("init_range", init_range, "uniform initialization range");
  }
};

// The Transformer of Vaswani et al. 2017 as fairseq's `transformer` builds it (Ott et al. 2018,
// "Scaling Neural Machine Translation"); the defaults are the paper's base model.
struct TransformerConfig {
  int64_t embed_dim = 512;                       // D: embedding width and width of every layer
  int64_t ffn_dim = 2048;                        // inner width of the feed-forward networks
  int64_t heads = 8;                             // attention heads; embed_dim must be a multiple
  int64_t encoder_layers = 6;                    // encoder layers (at least 1)
  int64_t decoder_layers = 6;                    // decoder layers (at least 1)
  double dropout = 0.1;                          // on embeddings and sublayer outputs; 0 disables
  double attention_dropout = 0.0;                // on attention weights; 0 disables
  double activation_dropout = 0.0;               // after the feed-forward ReLU; 0 disables
  bool normalize_before = false;                 // false: post-norm (the paper); true: pre-norm with a final
                                                 // LayerNorm on the encoder and decoder outputs
  bool share_all_embeddings = true;              // one matrix for encoder input, decoder input and output
                                                 // projection (joint vocabulary)
  bool share_decoder_input_output_embed = true;  // when share_all_embeddings is false: one matrix for the
                                                 // decoder input and the output projection

  void visit(ConfigVisitor& v) {
    v.field("embed_dim", embed_dim, "embedding and layer width");
    v.field("ffn_dim", ffn_dim, "inner width of the feed-forward networks");
    v.field("heads", heads, "attention heads; embed_dim must be a multiple");
    v.field("encoder_layers", encoder_layers, "encoder layers");
    v.field("decoder_layers", decoder_layers, "decoder layers");
    v.field("dropout", dropout, "dropout on embeddings and sublayer outputs; 0 disables");
    v.field("attention_dropout", attention_dropout, "dropout on attention weights; 0 disables");
    v.field("activation_dropout", activation_dropout, "dropout after the feed-forward ReLU; 0 disables");
    v.field("normalize_before", normalize_before, "pre-norm (true) or post-norm as in the paper (false)");
    v.field("share_all_embeddings", share_all_embeddings,
            "one matrix for encoder input, decoder input and output projection");
    v.field("share_decoder_input_output_embed", share_decoder_input_output_embed,
            "one matrix for decoder input and output projection (when share_all_embeddings is false)");
  }
};

// ConvS2S (Gehring et al. 2017) as fairseq's `fconv` builds it (models/fconv.h); the fields are
// its flags (--encoder-embed-dim ...). Layer lists are fairseq's expressions: a sum of lists of
// (channels, kernel width[, residual]) tuples, each list optionally repeated, "[(512, 3)] * 9 +
// [(1024, 3)] * 4"; residual (default 1) says how many layers back the residual comes from, 0
// for none. The defaults are fairseq's fconv_iwslt_de_en, with the dropout of its IWSLT example.
struct FconvConfig {
  int64_t encoder_embed_dim = 256;              // E: width of the source embeddings and of the encoder output
  std::string encoder_layers = "[(256, 3)] * 4";  // the encoder's convolutions
  int64_t decoder_embed_dim = 256;              // width of the target embeddings and of the attention
  std::string decoder_layers = "[(256, 3)] * 3";  // the decoder's convolutions
  int64_t decoder_out_embed_dim = 256;          // width between the last convolution and the vocabulary
  std::string decoder_attention = "True";       // True (every decoder layer attends), False, or one per layer
  double dropout = 0.2;                         // on embeddings, each convolution's input and before the
                                                // output projection; 0 disables
  int64_t max_positions = 1024;                 // rows of each learned position table (row 0 is padding's)
  bool share_input_output_embed = false;        // the output projection's weight is the target embedding
                                                // (needs decoder_out_embed_dim == decoder_embed_dim)
  bool share_all_embeddings = false;            // OpenSeq2Seq's shared_embed: one token table and one position
                                                // table for source and target, and the output projection is
                                                // the token table, without a bias (needs one width for
                                                // encoder_embed_dim, decoder_embed_dim, decoder_out_embed_dim)

  void visit(ConfigVisitor& v) {
    v.field("encoder_embed_dim", encoder_embed_dim, "width of the source embeddings and the encoder output");
    v.field("encoder_layers", encoder_layers, "encoder convolutions, fairseq's \"[(channels, kernel), ...] * n + ...\"");
    v.field("decoder_embed_dim", decoder_embed_dim, "width of the target embeddings and the attention");
    v.field("decoder_layers", decoder_layers, "decoder convolutions, fairseq's \"[(channels, kernel), ...] * n + ...\"");
    v.field("decoder_out_embed_dim", decoder_out_embed_dim, "width between the last convolution and the vocabulary");
    v.field("decoder_attention", decoder_attention, "True, False, or one per decoder layer: \"[True, False, ...]\"");
    v.field("dropout", dropout, "dropout on embeddings, convolution inputs and before the output; 0 disables");
    v.field("max_positions", max_positions, "rows of each learned position table (the longest sentence + 1)");
    v.field("share_input_output_embed", share_input_output_embed,
            "output projection weight is the target embedding (decoder_out_embed_dim == decoder_embed_dim)");
    v.field("share_all_embeddings", share_all_embeddings,
            "one token and one position table for both sides, the token table also the output projection");
  }

  static FconvConfig iwslt_de_en();  // fairseq's fconv_iwslt_de_en (the defaults above)
  static FconvConfig wmt_en_de();    // fairseq's fconv_wmt_en_de: 15 + 15 layers, embeddings 768, output 512
  static FconvConfig en_de_convs2s();  // OpenSeq2Seq's en-de-convs2s: fairseq's layers at width 512,
                                       // all embeddings shared
};

// Transformer-XL (Dai et al. 2019) as kimiyoung/transformer-xl's pytorch/mem_transformer.py
// builds it with attention type 0; the fields are its train.py flags. The defaults are the
// WikiText-103 base model of NVIDIA's recipe (16 layers of 512, 8 heads of 64). The segment
// length (tgt_len) belongs to the data stream, not to the model.
struct TransformerXlConfig {
  int64_t n_layer = 16;               // layers
  int64_t d_model = 512;              // D: width of the residual stream (even: sines and cosines of the positions)
  int64_t n_head = 8;                 // H: attention heads
  int64_t d_head = 64;                // Dh: width of each head (n_head * d_head need not equal d_model)
  int64_t d_inner = 2048;             // inner width of the feed-forward networks
  double dropout = 0.1;               // on embeddings, positions, sublayer outputs, the FFN's ReLU; 0 disables
  double dropatt = 0.0;               // on attention probabilities; 0 disables
  bool pre_lnorm = false;             // false: LayerNorm after each residual add (the paper); true: before each sublayer
  int64_t mem_len = 192;              // M: positions of earlier segments kept per layer; 0 = no memory
  int64_t clamp_len = -1;             // relative distances above it share its embedding; -1 = no clamping
  bool same_length = false;           // every query sees the same number of keys (the reference's --same_length)
  std::vector<int64_t> cutoffs;       // adaptive input and softmax cluster boundaries (ids sorted by frequency);
                                      // empty = one full softmax
  int64_t div_val = 1;                // cluster i's vectors have width d_embed / div_val^i; 1 = one matrix
  bool tie_weight = true;             // the softmax's output vectors are the embedding's (one tensor each)
  bool tie_projs = false;             // the tail clusters' softmax projections are the embedding's
  int64_t d_embed = 0;                // width of the head cluster's vectors; 0 = d_model
  std::string init = "normal";        // normal: N(0, init_std); uniform: U(-init_range, init_range)
  double init_range = 0.1;            // for init uniform
  double init_std = 0.02;             // for init normal; also the spread of LayerNorm weights around 1
  double proj_init_std = 0.01;        // the projections of the adaptive input and softmax: N(0, proj_init_std)

  void visit(ConfigVisitor& v) {
    v.field("n_layer", n_layer, "layers");
    v.field("d_model", d_model, "width of the residual stream (even)");
    v.field("n_head", n_head, "attention heads");
    v.field("d_head", d_head, "width of each attention head");
    v.field("d_inner", d_inner, "inner width of the feed-forward networks");
    v.field("dropout", dropout, "dropout on embeddings, positions and sublayer outputs; 0 disables");
    v.field("dropatt", dropatt, "dropout on attention probabilities; 0 disables");
    v.field("pre_lnorm", pre_lnorm, "LayerNorm before each sublayer (true) or after the residual add (false)");
    v.field("mem_len", mem_len, "positions of earlier segments kept as memory per layer; 0 = none");
    v.field("clamp_len", clamp_len, "relative distances above it share its embedding; -1 = no clamping");
    v.field("same_length", same_length, "every query attends over the same number of keys");
    v.field("cutoffs", cutoffs, "adaptive input/softmax cluster boundaries; [] = full softmax");
    v.field("div_val", div_val, "cluster i's vectors are d_embed / div_val^i wide; 1 = one matrix");
    v.field("tie_weight", tie_weight, "softmax output vectors are the embedding's");
    v.field("tie_projs", tie_projs, "tail clusters' softmax projections are the embedding's");
    v.field("d_embed", d_embed, "width of the head cluster's vectors; 0 = d_model");
    v.choice("init", init, {"normal", "uniform"}, "initialisation of weights: N(0, init_std) or U(-init_range, init_range)");
    v.field("init_range", init_range, "range of init uniform");
    v.field("init_std", init_std, "standard deviation of init normal and of LayerNorm weights around 1");
    v.field("proj_init_std", proj_init_std, "standard deviation of the adaptive projections");
  }
};

// An LSTM language model as pytorch/examples' word_language_model builds it (model.py RNNModel,
// LSTM; its main.py flags in brackets), with AWD-LSTM's weight drop (Merity et al. 2018) and
// tying through a projection as options (models/lstm_lm.h). The defaults are word_language_model's.
struct LstmLmConfig {
  int64_t embed_dim = 200;      // E: width of the word vectors [--emsize]
  int64_t hidden_size = 200;    // H: LSTM units per layer [--nhid]
  int64_t num_layers = 2;       // LSTM layers [--nlayers]
  double dropout_embed = 0.2;   // on the word vectors [--dropout]; 0 disables
  double dropout_hidden = 0.2;  // between LSTM layers [--dropout]; 0 disables
  double dropout_output = 0.2;  // on the last layer's output, before the softmax [--dropout]; 0 disables
  double weight_drop = 0.0;     // DropConnect on each layer's hidden-to-hidden matrix (AWD-LSTM's --wdrop); 0 disables
  bool tie_weights = false;     // output vectors are the word vectors [--tied]; H != E adds a projection H -> E
  double init_range = 0.1;      // word and output vectors start U(-init_range, init_range) [init_weights]

  void visit(ConfigVisitor& v) {
    v.field("embed_dim", embed_dim, "width of the word vectors");
    v.field("hidden_size", hidden_size, "LSTM units per layer");
    v.field("num_layers", num_layers, "LSTM layers");
    v.field("dropout_embed", dropout_embed, "dropout on the word vectors; 0 disables");
    v.field("dropout_hidden", dropout_hidden, "dropout between LSTM layers; 0 disables");
    v.field("dropout_output", dropout_output, "dropout on the last layer's output; 0 disables");
    v.field("weight_drop", weight_drop, "DropConnect on the hidden-to-hidden matrices (AWD-LSTM); 0 disables");
    v.field("tie_weights", tie_weights, "output vectors are the word vectors (a projection when sizes differ)");
    v.field("init_range", init_range, "word and output vectors start uniform in [-init_range, init_range]");
  }
};

// A sentence classifier (models/sentence_classifier.h): a language model's layers read the text,
// their states are pooled into one vector, and a small feed-forward head scores the labels, as
// ULMFiT builds it (Howard & Ruder 2018). The encoder's shape is its own section's (model.lstm_lm
// or model.transformer_xl); with a pretrained language model (classify.pretrained) the training task
// copies that model's section there (but its dropouts), and the stored configuration holds what
// was built.
struct LmClassifierConfig {
  std::string encoder = "lstm_lm";  // the language-model architecture whose layers encode the text
  int64_t num_classes = 0;          // labels; 0 = as many as the data has (the training task fills it in)
  std::string pooling = "concat";   // last (the state after the text), mean, max, or concat: [last; max; mean]
  int64_t head_hidden = 50;         // units of the head's hidden layer (ReLU); 0 = one linear layer
  double head_dropout = 0.1;        // on the pooled vector and on the hidden layer; 0 disables

  void visit(ConfigVisitor& v) {
    v.choice("encoder", encoder, {"lstm_lm", "transformer_xl"}, "language-model architecture that encodes the text");
    v.field("num_classes", num_classes, "labels; 0 = as many as the data has");
    v.choice("pooling", pooling, {"concat", "last", "max", "mean"},
             "how the states become one vector: last, mean, max or concat ([last; max; mean])");
    v.field("head_hidden", head_hidden, "units of the head's hidden layer; 0 = one linear layer");
    v.field("head_dropout", head_dropout, "dropout on the pooled vector and the hidden layer; 0 disables");
  }
};

// Every architecture's name, sorted: the choices of model.arch, listed by the registry
// (src/models/registry.cpp) and nowhere else.
const std::vector<std::string>& architecture_names();

struct ModelConfig {
  std::string arch = "gnmt";  // the architecture, a name in src/models/registry.cpp
  GnmtConfig gnmt;
  TransformerConfig transformer;
  FconvConfig fconv;
  TransformerXlConfig transformer_xl;
  LstmLmConfig lstm_lm;
  ConvCtcConfig jasper = ConvCtcConfig::jasper_10x5();                 // arch jasper
  ConvCtcConfig wave2letter_plus = ConvCtcConfig::wave2letter_plus_large();  // arch wave2letter_plus
  DeepSpeech2Config deepspeech2;
  Tacotron2Config tacotron2;
  LmClassifierConfig lm_classifier;

  void visit(ConfigVisitor& v) {
    v.choice("arch", arch, architecture_names(), "model architecture");
    v.section("gnmt", gnmt);
    v.section("transformer", transformer);
    v.section("fconv", fconv);
    v.section("transformer_xl", transformer_xl);
    v.section("lstm_lm", lstm_lm);
    v.section("jasper", jasper);
    v.section("wave2letter_plus", wave2letter_plus);
    v.section("deepspeech2", deepspeech2);
    v.section("tacotron2", tacotron2);
    v.section("lm_classifier", lm_classifier);
  }
};

}  // namespace mixseq
