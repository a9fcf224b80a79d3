#include "mixseq/data/lm_text.h"

#include <set>

#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/utf8.h"

namespace mixseq {

namespace {

void add_line(LmText& text, const std::string& line, const Tokenizer& tokenizer, const Vocabulary& vocabulary) {
  ++text.lines;
  text.characters += static_cast<int64_t>(utf8_length(line)) + 1;
  for (const auto& piece : tokenizer.encode(line)) {
    const int64_t id = vocabulary.id(piece);
    text.unknown_tokens += id == kUnkId && piece != kUnkSymbol;
    text.tokens.push_back(id);
  }
  text.tokens.push_back(kEosId);
}

}  // namespace

LmText read_lm_text(const std::string& path, const Tokenizer& tokenizer, const Vocabulary& vocabulary) {
  LmText text;
  LineReader reader(path);
  std::string line;
  while (reader.next(line)) add_line(text, line, tokenizer, vocabulary);
  return text;
}

LmText encode_lm_lines(const std::vector<std::string>& lines, const Tokenizer& tokenizer, const Vocabulary& vocabulary,
                       const std::string& what) {
  LmText text;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (const auto bad = find_invalid_utf8(lines[i]))
      throw Error(str_cat(what, " ", i + 1, ": malformed UTF-8 at byte ", *bad));
    add_line(text, lines[i], tokenizer, vocabulary);
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

std::vector<int64_t> encode_prompt(std::string_view prompt, const Tokenizer& tokenizer, const Vocabulary& vocabulary,
                                   const std::string& what) {
  if (const auto bad = find_invalid_utf8(prompt)) throw Error(str_cat(what, ": malformed UTF-8 at byte ", *bad));
  const auto pieces = tokenizer.encode(prompt);
  MIXSEQ_CHECK(!pieces.empty(), what, " is empty: give text to continue");
  const auto unknown = pieces_outside_vocabulary(prompt, tokenizer, vocabulary);
  if (!unknown.empty()) {
    std::string listed;
    for (size_t i = 0; i < unknown.size() && i < 10; ++i) listed += (i ? ", '" : "'") + unknown[i] + "'";
    throw Error(str_cat(what, ": ", unknown.size(), " word", unknown.size() > 1 ? "s are" : " is",
                        " not in the model's vocabulary (", listed, unknown.size() > 10 ? ", ..." : "",
                        "); the model would read <unk>: rephrase the prompt"));
  }
  std::vector<int64_t> ids = {kEosId};  // the prompt starts a line, as after the previous line's end
  for (const int64_t id : vocabulary.encode(pieces)) ids.push_back(id);
  return ids;
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
