#include "mixseq/text/bpe_tokenizer.h"

#include <utility>

#include "mixseq/text/utf8.h"
#include "subword_nmt_text.h"

namespace mixseq {

BpeTokenizer::BpeTokenizer(BpeCodes codes, const BpeApplyOptions& options) : applier_(std::move(codes), options) {}

std::vector<std::string> BpeTokenizer::encode(std::string_view line) const {
  std::vector<std::string> pieces;
  for (const std::string_view word : split_on_space(strip_subword_nmt(line))) {
    if (word.empty()) continue;
    const std::string key(word);
    {
      std::lock_guard<std::mutex> lock(cache_mutex_);
      if (const auto it = cache_.find(key); it != cache_.end()) {
        pieces.insert(pieces.end(), it->second.begin(), it->second.end());
        continue;
      }
    }
    auto word_pieces = applier_.segment_word(word);  // outside the lock: other threads keep going
    pieces.insert(pieces.end(), word_pieces.begin(), word_pieces.end());
    std::lock_guard<std::mutex> lock(cache_mutex_);
    cache_.emplace(key, std::move(word_pieces));
  }
  return pieces;
}

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
