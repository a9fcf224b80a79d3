// The only place that names every architecture (style R3).
#include "mixseq/models/registry.h"

#include <functional>
#include <map>
#include <string>

#include "mixseq/models/gnmt.h"
#include "mixseq/models/transformer.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

using ModelBuilder = std::function<Seq2SeqModel(const ModelConfig&, int64_t vocab_size)>;

const std::map<std::string, ModelBuilder> kModelRegistry = {
    {"gnmt", [](const ModelConfig& c, int64_t vocab_size) { return GnmtModel(c.gnmt, vocab_size).ptr(); }},
    {"transformer",
     [](const ModelConfig& c, int64_t vocab_size) { return TransformerModel(c.transformer, vocab_size).ptr(); }},
};

std::string known_names() {
  std::string names;
  for (const auto& [name, builder] : kModelRegistry) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

Seq2SeqModel build_model(const ModelConfig& config, int64_t vocab_size) {
  const auto it = kModelRegistry.find(config.arch);
  MIXSEQ_CHECK(it != kModelRegistry.end(), "unknown model.arch '", config.arch, "'; known: ", known_names());
  return it->second(config, vocab_size);
}

}  // namespace mixseq
