#include "python_regex.h"

#include <unicode/utext.h>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

size_t utf8_char_length(std::string_view text, size_t pos) {
  size_t end = pos + 1;
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  return end - pos;
}

bool is_ascii_punctuation(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Python's \w is str.isalnum() or "_"; its \s is str.isspace(). ICU's \s lacks \v, \x1c-\x1f, U+0085.
constexpr std::string_view kWordSet = "\\p{L}\\p{N}_";
constexpr std::string_view kSpaceSet = "\\s\\u000B\\u001C-\\u001F\\u0085";

// The ICU replacement of the escape "\<c>", or "" when ICU reads it as Python does.
std::string translate_escape(char c, bool in_class) {
  switch (c) {
    case 'w': return in_class ? std::string(kWordSet) : "[" + std::string(kWordSet) + "]";
    case 'W': return "[^" + std::string(kWordSet) + "]";
    case 's': return in_class ? std::string(kSpaceSet) : "[" + std::string(kSpaceSet) + "]";
    case 'S': return "[^" + std::string(kSpaceSet) + "]";
    case 'Z': return in_class ? "" : "\\z";  // Python's \Z is the very end of the text
    default: return "";
  }
}

// Length of a Python quantifier "{m}", "{m,}", "{,n}", "{m,n}" or "{,}" at pattern[pos], or 0 when
// the "{" is a literal (sre_parse: "{}" and anything that does not close like this).
size_t quantifier_length(std::string_view pattern, size_t pos) {
  size_t i = pos + 1;
  if (i < pattern.size() && pattern[i] == '}') return 0;
  while (i < pattern.size() && is_digit(pattern[i])) ++i;
  if (i < pattern.size() && pattern[i] == ',') {
    ++i;
    while (i < pattern.size() && is_digit(pattern[i])) ++i;
  }
  return i < pattern.size() && pattern[i] == '}' ? i + 1 - pos : 0;
}

}  // namespace

std::string python_pattern_to_icu(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  bool class_empty = false;  // no item yet in the current [...], where "]" and "-" are literals
  for (size_t i = 0; i < pattern.size();) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const size_t length = utf8_char_length(pattern, i + 1);
      const std::string replacement = translate_escape(pattern[i + 1], in_class);
      out += replacement.empty() ? std::string(pattern.substr(i, 1 + length)) : replacement;
      i += 1 + length;
      class_empty = false;
    } else if (in_class) {
      if (c == ']' && !class_empty) {
        out += ']';
        in_class = false;
      } else if (c == '-' && !class_empty && i + 1 < pattern.size() && pattern[i + 1] != ']') {
        out += '-';  // a range
      } else if (is_ascii_punctuation(c)) {
        out += '\\';
        out += c;
      } else {
        out.append(pattern, i, utf8_char_length(pattern, i));
      }
      i += utf8_char_length(pattern, i);
      class_empty = false;
    } else if (c == '[') {
      out += '[';
      ++i;
      if (i < pattern.size() && pattern[i] == '^') {
        out += '^';
        ++i;
      }
      in_class = class_empty = true;
    } else if (pattern.compare(i, 4, "(?P<") == 0) {
      out += "(?<";
      i += 4;
    } else if (pattern.compare(i, 4, "(?P=") == 0 && pattern.find(')', i) != std::string_view::npos) {
      const size_t close = pattern.find(')', i);
      out += "\\k<" + std::string(pattern.substr(i + 4, close - i - 4)) + ">";
      i = close + 1;
    } else if (c == '{') {
      const size_t length = quantifier_length(pattern, i);
      if (length == 0) {
        out += "\\{";
        ++i;
      } else {
        out += pattern[i + 1] == ',' ? "{0" : "{";  // ICU needs the lower bound
        out.append(pattern, i + 1, length - 1);
        i += length;
      }
    } else if (c == '}') {
      out += "\\}";
      ++i;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

PythonRegex::PythonRegex(const std::string& pattern) : pattern_(pattern) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError where{};
  const std::string translated = python_pattern_to_icu(pattern);
  // UREGEX_UNIX_LINES: only "\n" ends a line for ".", "^" and "$", as in Python.
  compiled_.reset(
      icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(translated), UREGEX_UNIX_LINES, where, status));
  MIXSEQ_CHECK(U_SUCCESS(status), "invalid regular expression '", pattern, "' (", u_errorName(status),
               " near character ", where.offset + 1, " of its ICU form '", translated,
               "'); escape special characters such as . * + ? ( ) [ ] { } | \\ to match them literally");
}

namespace {

// An ICU matcher over UTF-8 text whose indices are byte offsets.
class Utf8Matcher {
 public:
  Utf8Matcher(const icu::RegexPattern& pattern, std::string_view text) {
    UErrorCode status = U_ZERO_ERROR;
    text_.adoptInstead(utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status));
    matcher_.reset(pattern.matcher(status));
    MIXSEQ_CHECK(U_SUCCESS(status), "ICU regex matcher: ", u_errorName(status));
    matcher_->reset(text_.getAlias());
  }
  bool find(int64_t start) { return matcher_->find(start, status_) && ok(); }
  bool looking_at() { return matcher_->lookingAt(status_) && ok(); }
  int64_t start(int32_t group) { return matcher_->start64(group, status_); }
  int64_t end(int32_t group) { return matcher_->end64(group, status_); }
  int32_t group_count() const { return matcher_->groupCount(); }

 private:
  bool ok() const {
    MIXSEQ_CHECK(U_SUCCESS(status_), "ICU regex: ", u_errorName(status_));
    return true;
  }
  icu::LocalUTextPointer text_;
  std::unique_ptr<icu::RegexMatcher> matcher_;
  UErrorCode status_ = U_ZERO_ERROR;
};

}  // namespace

bool PythonRegex::match(std::string_view text) const { return Utf8Matcher(*compiled_, text).looking_at(); }

bool PythonRegex::search(std::string_view text) const { return Utf8Matcher(*compiled_, text).find(0); }

std::vector<std::optional<std::string_view>> PythonRegex::split(std::string_view text) const {
  Utf8Matcher matcher(*compiled_, text);
  std::vector<std::optional<std::string_view>> pieces;
  size_t last = 0;  // end of the previous match
  size_t search_from = 0;
  bool previous_was_empty = false;
  while (search_from <= text.size() && matcher.find(static_cast<int64_t>(search_from))) {
    const auto start = static_cast<size_t>(matcher.start(0));
    const auto end = static_cast<size_t>(matcher.end(0));
    // Python (3.7+) takes no empty match where the previous match ended.
    if (start == end && previous_was_empty && start == last) {
      if (start == text.size()) break;
      search_from = start + utf8_char_length(text, start);
      previous_was_empty = false;
      continue;
    }
    pieces.emplace_back(text.substr(last, start - last));
    for (int32_t group = 1; group <= matcher.group_count(); ++group) {
      const int64_t group_start = matcher.start(group);
      if (group_start < 0)
        pieces.emplace_back(std::nullopt);
      else
        pieces.emplace_back(text.substr(group_start, matcher.end(group) - group_start));
    }
    previous_was_empty = start == end;
    last = search_from = end;
  }
  pieces.emplace_back(text.substr(last));
  return pieces;
}

}  // namespace mixseq
