// The only place that names every architecture (style R3).
#include "mixseq/models/registry.h"

#include <functional>
#include <map>
#include <string>
#include <variant>

#include "mixseq/models/gnmt.h"
#include "mixseq/models/transformer.h"
#include "mixseq/models/transformer_xl.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

using Seq2SeqBuilder = std::function<Seq2SeqModel(const ModelConfig&, int64_t vocab_size)>;
using LanguageModelBuilder = std::function<LanguageModel(const ModelConfig&, int64_t vocab_size)>;
// The builder's type is the family: the alternatives are in ModelFamily's order.
using ModelBuilder = std::variant<Seq2SeqBuilder, LanguageModelBuilder>;
static_assert(static_cast<int>(ModelFamily::kSeq2Seq) == 0 && static_cast<int>(ModelFamily::kLanguageModel) == 1);

const std::map<std::string, ModelBuilder> kModelRegistry = {
    {"gnmt", Seq2SeqBuilder([](const ModelConfig& c, int64_t vocab_size) {
       return GnmtModel(c.gnmt, vocab_size).ptr();
     })},
    {"transformer", Seq2SeqBuilder([](const ModelConfig& c, int64_t vocab_size) {
       return TransformerModel(c.transformer, vocab_size).ptr();
     })},
    {"transformer_xl", LanguageModelBuilder([](const ModelConfig& c, int64_t vocab_size) {
       return TransformerXlModel(c.transformer_xl, vocab_size).ptr();
     })},
};

ModelFamily family_of(const ModelBuilder& builder) { return static_cast<ModelFamily>(builder.index()); }

std::string join(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "none yet" : joined;
}

const ModelBuilder& find_builder(const std::string& arch) {
  const auto it = kModelRegistry.find(arch);
  if (it != kModelRegistry.end()) return it->second;
  std::vector<std::string> known;
  for (const auto& [name, builder] : kModelRegistry) known.push_back(name);
  throw Error(str_cat("unknown model.arch '", arch, "'; known: ", join(known)));
}

template <typename Builder>
const Builder& builder_of_family(const std::string& arch, ModelFamily wanted) {
  const ModelBuilder& builder = find_builder(arch);
  const auto* of_family = std::get_if<Builder>(&builder);
  MIXSEQ_CHECK(of_family != nullptr, "model.arch '", arch, "' is a ", model_family_name(family_of(builder)),
               ", but a ", model_family_name(wanted), " is needed here; architectures of that family: ",
               join(model_architectures(wanted)));
  return *of_family;
}

}  // namespace

std::string model_family_name(ModelFamily family) {
  return family == ModelFamily::kSeq2Seq ? "sequence-to-sequence (translation) model" : "language model";
}

const std::vector<std::string>& architecture_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& [name, builder] : kModelRegistry) all.push_back(name);
    return all;
  }();
  return names;
}

ModelFamily model_family(const std::string& arch) { return family_of(find_builder(arch)); }

std::vector<std::string> model_architectures(ModelFamily family) {
  std::vector<std::string> names;
  for (const auto& [name, builder] : kModelRegistry)
    if (family_of(builder) == family) names.push_back(name);
  return names;
}

Seq2SeqModel build_seq2seq_model(const ModelConfig& config, int64_t vocab_size) {
  return builder_of_family<Seq2SeqBuilder>(config.arch, ModelFamily::kSeq2Seq)(config, vocab_size);
}

LanguageModel build_language_model(const ModelConfig& config, int64_t vocab_size) {
  return builder_of_family<LanguageModelBuilder>(config.arch, ModelFamily::kLanguageModel)(config, vocab_size);
}

}  // namespace mixseq
