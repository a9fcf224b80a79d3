#include "mixseq/quant/quantization_config.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mixseq/util/error.h"
#include "mixseq/util/nearest_name.h"

namespace mixseq {
namespace {

void check_settings(const LayerQuantizationSettings& s, const std::string& where) {
  MIXSEQ_CHECK(s.bits == 8 || s.bits == 16, where, ": bits must be 8 or 16, got ", s.bits);
  MIXSEQ_CHECK(s.percentile > 50 && s.percentile <= 100, where, ": percentile must be in (50, 100], got ",
               s.percentile);
}

std::string dump(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return out.c_str();
}

}  // namespace

void LayerQuantizationSettings::visit(ConfigVisitor& v) {
  v.field("keep_float", keep_float, "true: the layer stays in fp32");
  v.field("bits", bits, "grid width, 8 or 16 (16: simulation only)");
  v.field("weight_symmetric", weight_symmetric, "weight grid centered on 0 (int8 mode requires it)");
  v.field("weight_per_channel", weight_per_channel, "one weight scale per output row");
  v.field("activation_symmetric", activation_symmetric, "input and output grids centered on 0");
  v.choice("clip", clip, {"none", "avg", "percentile"}, "activation range from calibration");
  v.field("percentile", percentile, "for clip: percentile");
}

std::vector<LayerQuantizationOverride> builtin_layer_overrides() {
  return {{"classifier", "clip: none", "built-in default (the output layer)"},
          {"output_projection", "clip: none", "built-in default (the output layer)"}};
}

LayerQuantizationSettings QuantizationConfig::settings_for(const std::string& name) const {
  LayerQuantizationSettings settings = defaults;
  for (const auto& entry : layers) {
    if (fnmatch(entry.pattern.c_str(), name.c_str(), 0) != 0) continue;
    read_config_yaml(entry.yaml, entry.source, [&](ConfigVisitor& v) { settings.visit(v); });
  }
  check_settings(settings, "layer " + name);
  return settings;
}

QuantizationConfig parse_quantization_config(const std::string& yaml, const std::string& source) {
  QuantizationConfig config;
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw Error(str_cat(source, ": not YAML: ", e.what()));
  }
  if (!root || root.IsNull()) return config;
  MIXSEQ_CHECK(root.IsMap(), source, ": the quantization config must be a map of keys (mode, defaults, layers)");
  const std::vector<std::string> known = {"mode", "defaults", "layers"};
  for (const auto& entry : root) {
    const auto key = entry.first.IsScalar() ? entry.first.Scalar() : std::string("?");
    MIXSEQ_CHECK(std::find(known.begin(), known.end(), key) != known.end(), source, ":", entry.first.Mark().line + 1,
                 ": unknown key '", key, "'", did_you_mean(key, known));
  }
  // mode and defaults are typed fields: the shared reader checks their values and keys.
  YAML::Node typed(YAML::NodeType::Map);
  if (root["mode"]) typed["mode"] = root["mode"];
  if (root["defaults"]) typed["defaults"] = root["defaults"];
  read_config_yaml(dump(typed), source, [&](ConfigVisitor& v) {
    v.choice("mode", config.mode, {"int8", "simulated"}, "int8 kernels or quantize-dequantize simulation");
    v.section("defaults", config.defaults);
  });
  check_settings(config.defaults, source + " defaults");
  if (const auto layers = root["layers"]) {
    MIXSEQ_CHECK(layers.IsSequence(), source, ":", layers.Mark().line + 1,
                 ": layers must be a list of {pattern: ..., <settings>}");
    for (size_t i = 0; i < layers.size(); ++i) {
      const auto where = str_cat(source, " layers[", i, "] (line ", layers[i].Mark().line + 1, ")");
      MIXSEQ_CHECK(layers[i].IsMap() && layers[i]["pattern"] && layers[i]["pattern"].IsScalar(), where,
                   ": each entry needs a pattern, e.g. {pattern: \"attention.*\", clip: none}");
      LayerQuantizationOverride entry{layers[i]["pattern"].Scalar(), "", where};
      YAML::Node rest(YAML::NodeType::Map);
      for (const auto& kv : layers[i])
        if (kv.first.Scalar() != "pattern") rest[kv.first] = kv.second;
      entry.yaml = dump(rest);
      LayerQuantizationSettings checked = config.defaults;  // unknown keys and bad values fail here, not later
      read_config_yaml(entry.yaml, where, [&](ConfigVisitor& v) { checked.visit(v); });
      check_settings(checked, where);
      config.layers.push_back(std::move(entry));
    }
  }
  return config;
}

QuantizationConfig read_quantization_config(const std::string& path) {
  // An ifstream opens a directory, and reading it gives nothing: the defaults, without a word.
  MIXSEQ_CHECK(!std::filesystem::is_directory(path), "cannot read quantization config '", path,
               "': it is a directory, not a YAML file");
  std::ifstream in(path);
  MIXSEQ_CHECK(in, "cannot read quantization config '", path, "'");
  std::stringstream text;
  text << in.rdbuf();
  MIXSEQ_CHECK(!in.bad(), "cannot read quantization config '", path, "': read error");
  return parse_quantization_config(text.str(), path);
}

void check_patterns_match(const QuantizationConfig& config, const std::vector<std::string>& layer_names) {
  const auto builtin = builtin_layer_overrides();
  for (const auto& entry : config.layers) {
    // The built-in overrides name the output layer of every architecture; each model has one of them.
    const bool is_builtin = std::any_of(builtin.begin(), builtin.end(), [&](const LayerQuantizationOverride& b) {
      return b.pattern == entry.pattern && b.source == entry.source;
    });
    if (is_builtin) continue;
    const bool matches = std::any_of(layer_names.begin(), layer_names.end(), [&](const std::string& name) {
      return fnmatch(entry.pattern.c_str(), name.c_str(), 0) == 0;
    });
    MIXSEQ_CHECK(matches, entry.source, ": pattern '", entry.pattern, "' matches no layer of this model",
                 did_you_mean(entry.pattern, layer_names),
                 "; a rule that matches nothing changes nothing (mixseq quantize lists the layer names)");
  }
}

}  // namespace mixseq
