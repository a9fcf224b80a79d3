#include "mixseq/data/lm_text.h"

#include <set>

#include "mixseq/util/utf8.h"
#include "mixseq/util/line_reader.h"

namespace mixseq {

LmText read_lm_text(const std::string& path, const Tokenizer& tokenizer, const Vocabulary& vocabulary) {
  LmText text;
  LineReader reader(path);
  std::string line;
  while (reader.next(line)) {
    ++text.lines;
    text.characters += static_cast<int64_t>(utf8_length(line)) + 1;
    const auto pieces = tokenizer.encode(line);
    for (const auto& piece : pieces) {
      const int64_t id = vocabulary.id(piece);
      text.unknown_tokens += id == kUnkId && piece != kUnkSymbol;
      text.tokens.push_back(id);
    }
    text.tokens.push_back(kEosId);
  }
  return text;
}

std::vector<std::string> pieces_outside_vocabulary(std::string_view text, const Tokenizer& tokenizer,
                                                   const Vocabulary& vocabulary) {
  std::vector<std::string> outside;
  std::set<std::string> seen;
  for (const auto& piece : tokenizer.encode(text))
    if (piece != kUnkSymbol && !vocabulary.contains(piece) && seen.insert(piece).second) outside.push_back(piece);
  return outside;
}

bool is_character_level(const Vocabulary& vocabulary) {
  for (int64_t id = kSpecialSymbolCount; id < vocabulary.size(); ++id) {
    const auto& token = vocabulary.token(id);
    if (token.rfind("<filler", 0) == 0) continue;  // padding symbols (text/vocabulary.h)
    if (utf8_length(token) != 1) return false;
  }
  return vocabulary.size() > kSpecialSymbolCount;
}

}  // namespace mixseq
