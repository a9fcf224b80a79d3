#include "mixseq/text/synthesis_symbols.h"

#include <map>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

constexpr const char* kPad = "_";
constexpr const char* kSpecial = "-";
constexpr const char* kPunctuation = "!'(),.:;? ";
constexpr const char* kLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
// CMUdict's phonemes (tacotron2/text/cmudict.py valid_symbols).
const char* const kArpabet[] = {
    "AA",  "AA0", "AA1", "AA2", "AE",  "AE0", "AE1", "AE2", "AH",  "AH0", "AH1", "AH2", "AO",  "AO0", "AO1",
    "AO2", "AW",  "AW0", "AW1", "AW2", "AY",  "AY0", "AY1", "AY2", "B",   "CH",  "D",   "DH",  "EH",  "EH0",
    "EH1", "EH2", "ER",  "ER0", "ER1", "ER2", "EY",  "EY0", "EY1", "EY2", "F",   "G",   "HH",  "IH",  "IH0",
    "IH1", "IH2", "IY",  "IY0", "IY1", "IY2", "JH",  "K",   "L",   "M",   "N",   "NG",  "OW",  "OW0", "OW1",
    "OW2", "OY",  "OY0", "OY1", "OY2", "P",   "R",   "S",   "SH",  "T",   "TH",  "UH",  "UH0", "UH1", "UH2",
    "UW",  "UW0", "UW1", "UW2", "V",   "W",   "Y",   "Z",   "ZH"};

const std::map<std::string, int64_t>& symbol_ids() {
  static const std::map<std::string, int64_t> ids = [] {
    std::map<std::string, int64_t> m;
    const auto& symbols = synthesis_symbols();
    for (size_t i = 0; i < symbols.size(); ++i) m.emplace(symbols[i], static_cast<int64_t>(i));
    return m;
  }();
  return ids;
}

std::string shown(unsigned char c) {
  if (c >= 0x20 && c < 0x7f) return str_cat("'", std::string(1, static_cast<char>(c)), "'");
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", c);
  return str_cat("byte ", hex, c >= 0x80 ? " (non-ASCII: transliterate the text first)" : " (a control character)");
}

}  // namespace

const std::vector<std::string>& synthesis_symbols() {
  static const std::vector<std::string> symbols = [] {
    std::vector<std::string> s{kPad, kSpecial};
    for (const char* p = kPunctuation; *p; ++p) s.emplace_back(1, *p);
    for (const char* p = kLetters; *p; ++p) s.emplace_back(1, *p);
    for (const char* phoneme : kArpabet) s.push_back(str_cat("@", phoneme));
    return s;
  }();
  return symbols;
}

std::vector<int64_t> synthesis_symbol_ids(const std::string& text, const std::string& where) {
  MIXSEQ_CHECK(text.find_first_not_of(" \t\r\n") != std::string::npos, where,
               ": empty text: nothing to synthesize");
  const auto& ids = symbol_ids();
  std::vector<int64_t> out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '{') {  // ARPAbet in braces: "{HH AW1 S}"
      const size_t close = text.find('}', i);
      MIXSEQ_CHECK(close != std::string::npos, where, ": column ", i + 1, ": '{' opens ARPAbet phonemes but no '}' closes them");
      size_t at = i + 1;
      while (at < close) {
        const size_t end = std::min(text.find(' ', at), close);
        if (end > at) {
          const std::string phoneme = text.substr(at, end - at);
          const auto it = ids.find("@" + phoneme);
          MIXSEQ_CHECK(it != ids.end(), where, ": column ", at + 1, ": unknown ARPAbet phoneme '", phoneme,
                       "' (CMUdict's: AA, AA0, ..., ZH)");
          out.push_back(it->second);
        }
        at = end + 1;
      }
      i = close;
      continue;
    }
    const auto it = c < 0x80 ? ids.find(std::string(1, static_cast<char>(c))) : ids.end();
    MIXSEQ_CHECK(it != ids.end() && c != '_', where, ": column ", i + 1, ": ", shown(c),
                 " is not a symbol of the synthesis table; allowed: letters A-Z a-z, space, -!'(),.:;? "
                 "and {ARPAbet} in braces (spell out digits and other signs)");
    out.push_back(it->second);
  }
  MIXSEQ_CHECK(!out.empty(), where, ": no symbols to synthesize: the braces hold no ARPAbet phonemes");
  return out;
}

std::string synthesis_symbols_text() {
  std::string text;
  for (const auto& symbol : synthesis_symbols()) text += symbol + "\n";
  return text;
}

}  // namespace mixseq
