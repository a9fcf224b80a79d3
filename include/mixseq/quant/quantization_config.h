// Quantization settings: what `mixseq quantize --config quant.yaml` reads. One set of defaults
// for the model, then per-layer overrides by name pattern, applied in file order:
//
//   mode: int8                       # int8 (real int8 kernels) or simulated (quantize-dequantize)
//   defaults: {bits: 8, weight_symmetric: true, weight_per_channel: true,
//              activation_symmetric: false, clip: avg}
//   layers:                          # optional; each entry: pattern + the keys it changes
//     - {pattern: "attention.*", clip: none}
//     - {pattern: classifier, keep_float: true}
//
// The file's entries come after builtin_layer_overrides() (below). Layer names are the module paths of the model's quantizable linear layers, the checkpoint
// keys without ".weight" ("classifier", "attention.query_proj", "decoder_layers.0.ffn..."), and
// in mode: simulated also of its embeddings ("embedding") and quantization points
// ("attention.scores", "decoder_lstm.cell.sigmoid_f", "encoder_layers.residual_add_1"; see
// nn/quantization_point.h): `mixseq quantize` prints them. A point takes bits, activation_symmetric,
// clip, percentile and keep_float; an embedding bits and the weight_* keys (per channel: per row). Patterns are shell globs (fnmatch: * ? [..]; * crosses dots).
// Unknown keys, in the file or in an entry, are errors naming the nearest known key.
#pragma once

#include <string>
#include <vector>

#include "mixseq/util/config.h"

namespace mixseq {

struct LayerQuantizationSettings {
  bool keep_float = false;            // true: the layer stays in fp32 (the Distiller table's "without ...")
  int64_t bits = 8;                   // grid width; 16 only in simulation (the int8 kernels take 8)
  bool weight_symmetric = true;       // weight grid centered on 0 (int8 mode requires it)
  bool weight_per_channel = true;     // one weight scale per output row instead of one per layer
  bool activation_symmetric = false;  // input and output grids centered on 0, else [min, max]
  std::string clip = "avg";           // activation range: none = min/max over all calibration batches;
                                      // avg = mean of per-batch min and max (Distiller "avg");
                                      // percentile = mean of per-batch percentiles
  double percentile = 99.99;          // for clip: percentile, in (50, 100]; the low end uses 100 - it

  void visit(ConfigVisitor& v);
};

struct LayerQuantizationOverride {
  std::string pattern;  // glob over layer names
  std::string yaml;     // the entry's other keys, applied over the settings so far
  std::string source;   // where the entry is, for errors ("quant.yaml layers[1]")
};

// Built-in overrides that come before a file's `layers:` (which may change them again): the
// output layer (GNMT's "classifier", the Transformer's "output_projection") keeps its full
// input range, clip: none. Clipping it cost the Multi30k Transformer 2.3 BLEU in int8 (25.2
// against 27.5 in fp32; 27.1 unclipped), as clipping the classifier did in Distiller's GNMT.
std::vector<LayerQuantizationOverride> builtin_layer_overrides();

struct QuantizationConfig {
  std::string mode = "int8";  // int8 or simulated
  LayerQuantizationSettings defaults;
  std::vector<LayerQuantizationOverride> layers = builtin_layer_overrides();

  // The settings of the layer `name`: the defaults, then every matching override in order.
  LayerQuantizationSettings settings_for(const std::string& name) const;
};

// Reads and checks YAML text (`source` names it in errors); "" gives the defaults.
QuantizationConfig parse_quantization_config(const std::string& yaml, const std::string& source);
QuantizationConfig read_quantization_config(const std::string& path);

// Throws mixseq::Error naming the entry (file, index and line) when a pattern of the file's
// `layers:` matches none of `layer_names` (a typo would otherwise change nothing, silently).
// The built-in overrides are exempt: each names the output layer of one architecture.
void check_patterns_match(const QuantizationConfig& config, const std::vector<std::string>& layer_names);

}  // namespace mixseq
