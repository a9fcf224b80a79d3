#include "mixseq/text/ctc_symbols.h"

#include <algorithm>
#include <set>

#include "mixseq/text/lowercase.h"
#include "mixseq/util/error.h"
#include "mixseq/util/utf8.h"

namespace mixseq {
namespace {

constexpr std::string_view kBlankName = "<blank>";
constexpr std::string_view kSpaceName = "<space>";

}  // namespace

CtcSymbols CtcSymbols::english_characters() {
  CtcSymbols symbols;
  symbols.symbols_ = {std::string(kBlankName), " ", "'"};
  for (char c = 'a'; c <= 'z'; ++c) symbols.symbols_.push_back(std::string(1, c));
  return symbols;
}

CtcSymbols CtcSymbols::from_text(std::string_view text, const std::string& name) {
  if (const auto bad = find_invalid_utf8(text))
    throw Error(str_cat(name, ": malformed UTF-8 at byte ", *bad));
  CtcSymbols symbols;
  std::set<std::string> seen;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string symbol(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (!symbol.empty() && symbol.back() == '\r') symbol.pop_back();
    if (symbol.empty() && line_number > 1) continue;
    if (line_number == 1) {
      MIXSEQ_CHECK(symbol == kBlankName, name, ":1: the first symbol must be ", kBlankName, " (the CTC blank), not '",
                   symbol, "'");
    } else if (symbol == kSpaceName) {
      symbol = " ";
    } else {
      MIXSEQ_CHECK(utf8_length(symbol) == 1, name, ":", line_number, ": '", symbol,
                   "' is not one character (write the space as ", kSpaceName, ")");
    }
    MIXSEQ_CHECK(seen.insert(symbol).second, name, ":", line_number, ": '", symbol, "' is listed twice");
    symbols.symbols_.push_back(symbol);
  }
  MIXSEQ_CHECK(symbols.symbols_.size() >= 2, name, ": lists no symbols besides the blank");
  return symbols;
}

std::string CtcSymbols::to_text() const {
  std::string text;
  for (const auto& symbol : symbols_) text += (symbol == " " ? std::string(kSpaceName) : symbol) + "\n";
  return text;
}

std::string CtcSymbols::normalize(std::string_view transcript) {
  const std::string lower = lowercase(transcript);
  std::string out;
  for (const auto& word : split_whitespace(lower)) {
    if (!out.empty()) out += ' ';
    out.append(word.data(), word.size());
  }
  return out;
}

std::optional<std::vector<int64_t>> CtcSymbols::encode(std::string_view normalized, std::string* why) const {
  if (normalized.empty()) {
    if (why) *why = "empty transcript";
    return std::nullopt;
  }
  std::vector<int64_t> ids;
  for (const auto& character : split_utf8_chars(normalized)) {
    const auto it = std::find(symbols_.begin() + 1, symbols_.end(), character);
    if (it == symbols_.end()) {
      if (why) *why = str_cat("character '", std::string(character), "' is not a symbol of the vocabulary");
      return std::nullopt;
    }
    ids.push_back(static_cast<int64_t>(it - symbols_.begin()));
  }
  return ids;
}

std::string CtcSymbols::decode(const std::vector<int64_t>& ids) const {
  std::string text;
  for (const int64_t id : ids)
    if (id != kCtcBlankId && id >= 0 && id < size()) text += symbols_[static_cast<size_t>(id)];
  return text;
}

}  // namespace mixseq
