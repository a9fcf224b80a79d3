#include "mixseq/text/ctc_symbols.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "mixseq/text/lowercase.h"
#include "mixseq/text/sentencepiece_tokenizer.h"
#include "mixseq/util/error.h"
#include "mixseq/util/utf8.h"

namespace mixseq {
namespace {

constexpr std::string_view kBlankName = "<blank>";
constexpr std::string_view kSpaceName = "<space>";
constexpr std::string_view kPiecesHeader = "<blank>\tpieces";  // vocab.txt's first line for pieces
constexpr std::string_view kWordStart = "\xE2\x96\x81";        // U+2581, SentencePiece's space

// "▁the" -> " the", and back.
std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}
std::string piece_text(const std::string& spelling) { return replace_all(spelling, kWordStart, " "); }
std::string piece_spelling(const std::string& text) { return replace_all(text, " ", kWordStart); }

// Pieces that are not units of text: the model's unknown and control symbols.
bool is_special_piece(const std::string& piece) {
  return piece == "<unk>" || piece == "<s>" || piece == "</s>" || piece == "<pad>";
}

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
  std::string_view first_line = text.substr(0, text.find('\n'));
  if (!first_line.empty() && first_line.back() == '\r') first_line.remove_suffix(1);
  symbols.pieces_ = first_line == kPiecesHeader;
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
      MIXSEQ_CHECK(symbol == kBlankName || symbols.pieces_, name, ":1: the first symbol must be ", kBlankName,
                   " (the CTC blank), not '", symbol, "'");
      symbol = kBlankName;
    } else if (symbols.pieces_) {
      MIXSEQ_CHECK(symbol.find_first_of(" \t") == std::string::npos, name, ":", line_number, ": piece '", symbol,
                   "' holds a space or tab (a piece is written as spm writes it, U+2581 for the space)");
      MIXSEQ_CHECK(!is_special_piece(symbol), name, ":", line_number, ": '", symbol,
                   "' is a control symbol of SentencePiece, not a unit of text");
      symbols.piece_ids_[symbol] = static_cast<int64_t>(symbols.symbols_.size());
      symbol = piece_text(symbol);
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

CtcSymbols CtcSymbols::from_sentencepiece(const std::string& model_path) {
  const auto segmenter = std::make_shared<const SentencePieceTokenizer>(model_path);
  const std::filesystem::path vocab_path = std::filesystem::path(model_path).replace_extension(".vocab");
  std::ifstream in(vocab_path);
  MIXSEQ_CHECK(in.good(), vocab_path.string(), " cannot be read: the pieces of ", model_path,
               " are listed there (`mixseq spm train` writes it beside the model)");
  std::string text = std::string(kPiecesHeader) + "\n", line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    const size_t tab = line.find('\t');
    MIXSEQ_CHECK(tab != std::string::npos && tab > 0, vocab_path.string(), ":", number,
                 ": expected piece<TAB>score, as spm_train writes");
    const std::string piece = line.substr(0, tab);
    if (!is_special_piece(piece)) text += piece + "\n";
  }
  CtcSymbols symbols = from_text(text, vocab_path.string());
  symbols.segmenter_ = segmenter;
  return symbols;
}

std::string CtcSymbols::to_text() const {
  if (pieces_) {
    std::string text = std::string(kPiecesHeader) + "\n";
    for (size_t id = 1; id < symbols_.size(); ++id) text += piece_spelling(symbols_[id]) + "\n";
    return text;
  }
  std::string text;
  for (const auto& symbol : symbols_) text += (symbol == " " ? std::string(kSpaceName) : symbol) + "\n";
  return text;
}

namespace {

// Runs of spaces as one, none at the ends.
std::string normalize_spaces(std::string_view text) {
  std::string out;
  for (const char c : text)
    if (c != ' ' || (!out.empty() && out.back() != ' ')) out += c;
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

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
  if (pieces_) {
    MIXSEQ_CHECK(segmenter_ != nullptr, "encoding a transcript into pieces needs the SentencePiece model; these "
                 "pieces were read back without it (a checkpoint's symbols decode only)");
    for (const auto& piece : segmenter_->encode(normalized)) {
      const auto it = piece_ids_.find(piece);
      if (it == piece_ids_.end()) {
        if (why) *why = str_cat("characters '", piece_text(piece), "' have no piece in the SentencePiece model");
        return std::nullopt;
      }
      ids.push_back(it->second);
    }
    return ids;
  }
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
  return normalize_spaces(text);  // a space emitted first, or two with a blank between them
}

}  // namespace mixseq
