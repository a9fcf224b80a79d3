// The registry of tokenizer kinds: the only place that names each one.
#include "mixseq/text/tokenizer.h"

#include <functional>
#include <map>

#include "mixseq/text/bpe_tokenizer.h"
#include "mixseq/text/sentencepiece_tokenizer.h"
#include "mixseq/util/utf8.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// For text that is segmented already: pieces are the space-separated fields.
class PresegmentedTokenizer : public Tokenizer {
 public:
  std::vector<std::string> encode(std::string_view line) const override {
    const auto fields = split_whitespace(line);
    return {fields.begin(), fields.end()};
  }
  std::string decode(const std::vector<std::string>& pieces) const override {
    std::string text;
    for (const auto& piece : pieces) {
      if (!text.empty()) text += ' ';
      text += piece;
    }
    return text;
  }
  std::string describe() const override { return "none"; }
};

using TokenizerFactory = std::function<std::unique_ptr<Tokenizer>(const std::string& path)>;

const std::map<std::string, TokenizerFactory>& tokenizer_kinds() {
  static const std::map<std::string, TokenizerFactory> kinds = {
      {"bpe", [](const std::string& path) { return std::make_unique<BpeTokenizer>(BpeCodes::load(path), BpeApplyOptions{}); }},
      {"spm", [](const std::string& path) { return std::make_unique<SentencePieceTokenizer>(path); }},
  };
  return kinds;
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& spec) {
  if (spec == "none") return std::make_unique<PresegmentedTokenizer>();
  const auto colon = spec.find(':');
  const auto kind = tokenizer_kinds().find(spec.substr(0, colon));
  if (colon == std::string::npos || kind == tokenizer_kinds().end()) {
    std::string known = "none";
    for (const auto& [name, factory] : tokenizer_kinds()) known += ", " + name + ":<file>";
    throw Error(str_cat("unknown tokenizer '", spec, "'; known: ", known));
  }
  return kind->second(spec.substr(colon + 1));
}

}  // namespace mixseq
