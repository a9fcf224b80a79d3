#include "mixseq/text/bpe_tokenizer.h"

#include <algorithm>
#include <utility>

namespace mixseq {

BpeTokenizer::BpeTokenizer(BpeCodes codes, const BpeApplyOptions& options) : applier_(std::move(codes), options) {}

std::vector<std::string> BpeTokenizer::encode(std::string_view line) const { return applier_.segment_line(line); }

std::string BpeTokenizer::decode(const std::vector<std::string>& pieces) const {
  std::string joined;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i) joined += ' ';
    joined += pieces[i];
  }
  const std::string& separator = applier_.options().separator;
  if (separator.empty()) return joined;
  // sed -r 's/(@@ )|(@@ ?$)//g': drop the separator when a space or the end of the line follows it.
  std::string text;
  for (size_t i = 0; i < joined.size();) {
    if (joined.compare(i, separator.size(), separator) == 0) {
      const size_t after = i + separator.size();
      if (after == joined.size() || joined[after] == ' ') {
        i = std::min(after + 1, joined.size());
        continue;
      }
    }
    text += joined[i++];
  }
  return text;
}

std::string BpeTokenizer::describe() const {
  const std::string& source = applier_.codes().source();
  return "bpe:" + (source.empty() ? std::string("<in memory>") : source);
}

}  // namespace mixseq
