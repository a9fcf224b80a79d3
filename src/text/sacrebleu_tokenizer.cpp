#include "mixseq/text/sacrebleu_tokenizer.h"

#include <unicode/uchar.h>

#include <array>
#include <utility>

#include "mixseq/util/utf8.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// The only place that names every tokenizer.
constexpr std::array<std::pair<std::string_view, BleuTokenizer>, 4> kTokenizerNames = {{
    {"13a", BleuTokenizer::k13a},
    {"intl", BleuTokenizer::kIntl},
    {"char", BleuTokenizer::kChar},
    {"none", BleuTokenizer::kNone},
}};

// Python's str.replace: one left-to-right pass over non-overlapping occurrences.
std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  for (size_t pos; (pos = text.find(from, start)) != std::string_view::npos; start = pos + from.size()) {
    out.append(text, start, pos - start);
    out.append(to);
  }
  out.append(text, start);
  return out;
}

// Where re.sub puts the spaces for a two-character pattern: r'\1 \2 ' or r' \1 \2'.
enum class PairSpacing { kAfterEach, kBeforeEach };

// re.sub with a pattern of two one-character classes, e.g. ([^0-9])([\.,]): the leftmost match
// wins and the scan resumes after it, so overlapping candidates are skipped exactly as Python does.
template <typename First, typename Second>
std::u32string space_pairs(const std::u32string& text, First first, Second second, PairSpacing spacing) {
  std::u32string out;
  out.reserve(text.size() * 2);
  size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      if (spacing == PairSpacing::kAfterEach) {
        out += {text[i], U' ', text[i + 1], U' '};
      } else {
        out += {U' ', text[i], U' ', text[i + 1]};
      }
      i += 2;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

// re.sub(r'(<class>)', r' \1 ', text).
template <typename Pred>
std::u32string space_around(const std::u32string& text, Pred pred) {
  std::u32string out;
  out.reserve(text.size() * 2);
  for (char32_t c : text) {
    if (pred(c)) {
      out += {U' ', c, U' '};
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// ' '.join(text.split()): single spaces between tokens, none at either end.
std::string join_tokens(const std::u32string& text) {
  const std::string utf8 = encode_utf8(text);
  std::string out;
  out.reserve(utf8.size());
  for (std::string_view token : split_whitespace(utf8)) {
    if (!out.empty()) out.push_back(' ');
    out.append(token);
  }
  return out;
}

std::u32string decode_checked(std::string_view text) {
  const auto bad = find_invalid_utf8(text);
  MIXSEQ_CHECK(!bad, "sacreBLEU tokenizer: malformed UTF-8 at byte ", *bad);
  return decode_utf8(text);
}

bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }  // Python re's [0-9]
bool is_period_or_comma(char32_t c) { return c == U'.' || c == U','; }

// mteval-v13a's [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation and symbols except ' - . ,
bool is_13a_symbol(char32_t c) {
  return (c >= U'{' && c <= U'~') || (c >= U'[' && c <= U'`') || (c >= U' ' && c <= U'&') ||
         (c >= U'(' && c <= U'+') || (c >= U':' && c <= U'@') || c == U'/';
}

// Unicode general categories as Python's `regex` module spells them: \p{N}, \p{P}, \p{S}.
bool is_number(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0; }
bool is_punctuation(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0; }
bool is_symbol(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_S_MASK) != 0; }

}  // namespace

std::string_view bleu_tokenizer_name(BleuTokenizer tokenizer) {
  for (const auto& [name, value] : kTokenizerNames)
    if (value == tokenizer) return name;
  throw Error(str_cat("unknown BleuTokenizer value ", static_cast<int>(tokenizer)));
}

BleuTokenizer parse_bleu_tokenizer(std::string_view name) {
  std::string known;
  for (const auto& [known_name, value] : kTokenizerNames) {
    if (known_name == name) return value;
    known += known.empty() ? "" : ", ";
    known += known_name;
  }
  throw Error(str_cat("unknown BLEU tokenizer '", name, "'; known: ", known));
}

// sacreBLEU tokenizers/tokenizer_13a.py + tokenizer_re.py (mteval-v13a.pl).
std::string tokenize_13a(std::string_view line) {
  std::string text = replace_all(line, "<skipped>", "");
  text = replace_all(text, "-\n", "");
  text = replace_all(text, "\n", " ");
  if (text.find('&') != std::string::npos) {  // in this order: "&amp;lt;" becomes "&lt;", not "<"
    text = replace_all(text, "&quot;", "\"");
    text = replace_all(text, "&amp;", "&");
    text = replace_all(text, "&lt;", "<");
    text = replace_all(text, "&gt;", ">");
  }
  // The padding spaces let a leading "." or a trailing "." find a non-digit neighbour.
  std::u32string s = U" " + decode_checked(text) + U" ";
  s = space_around(s, is_13a_symbol);
  const auto non_digit = [](char32_t c) { return !is_ascii_digit(c); };
  s = space_pairs(s, non_digit, is_period_or_comma, PairSpacing::kAfterEach);  // unless after a digit
  s = space_pairs(s, is_period_or_comma, non_digit, PairSpacing::kBeforeEach);  // unless before a digit
  s = space_pairs(s, is_ascii_digit, [](char32_t c) { return c == U'-'; }, PairSpacing::kAfterEach);
  return join_tokens(s);
}

// sacreBLEU tokenizers/tokenizer_intl.py (mteval-v14.pl, lines 954-983). Unlike 13a there is no
// padding, so a number at the very end keeps its final period ("1990."), as in mteval-v14.pl.
std::string tokenize_intl(std::string_view line) {
  std::u32string s = decode_checked(line);
  const auto non_number = [](char32_t c) { return !is_number(c); };
  s = space_pairs(s, non_number, is_punctuation, PairSpacing::kAfterEach);
  s = space_pairs(s, is_punctuation, non_number, PairSpacing::kBeforeEach);
  s = space_around(s, is_symbol);
  return join_tokens(s);
}

// sacreBLEU tokenizers/tokenizer_char.py: " ".join(line). Whitespace characters become
// "tokens" too and vanish when BLEU splits the result.
std::string tokenize_char(std::string_view line) {
  std::string out;
  out.reserve(line.size() * 2);
  for (std::string_view c : split_utf8_chars(line)) {
    if (!out.empty()) out.push_back(' ');
    out.append(c);
  }
  return out;
}

std::string bleu_tokenize(std::string_view line, BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::k13a: return tokenize_13a(line);
    case BleuTokenizer::kIntl: return tokenize_intl(line);
    case BleuTokenizer::kChar: return tokenize_char(line);
    case BleuTokenizer::kNone: return std::string(line);
  }
  throw Error(str_cat("unknown BleuTokenizer value ", static_cast<int>(tokenizer)));
}

}  // namespace mixseq
