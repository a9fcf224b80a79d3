#include "mixseq/util/utf8.h"

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Decodes one code point starting at text[pos]; returns its byte length, or 0 when the
// sequence there is malformed (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF).
size_t decode_one(std::string_view text, size_t pos, char32_t& out) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  size_t length;
  char32_t min_value;
  if (lead < 0x80) {
    out = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, min_value = 0x80, out = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, min_value = 0x800, out = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, min_value = 0x10000, out = lead & 0x07;
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    const unsigned char continuation = byte(pos + i);
    if ((continuation & 0xC0) != 0x80) return 0;
    out = (out << 6) | (continuation & 0x3F);
  }
  if (out < min_value || out > 0x10FFFF || (out >= 0xD800 && out <= 0xDFFF)) return 0;
  return length;
}

}  // namespace

std::optional<size_t> find_invalid_utf8(std::string_view text) {
  char32_t c;
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = decode_one(text, pos, c);
    if (length == 0) return pos;
    pos += length;
  }
  return std::nullopt;
}

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  char32_t c;
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = decode_one(text, pos, c);
    MIXSEQ_CHECK(length != 0, "malformed UTF-8 at byte ", pos);
    out.push_back(c);
    pos += length;
  }
  return out;
}

void append_utf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string encode_utf8(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  for (char32_t c : code_points) append_utf8(c, out);
  return out;
}

std::vector<std::string_view> split_utf8_chars(std::string_view text) {
  std::vector<std::string_view> chars;
  chars.reserve(text.size());
  char32_t c;
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = decode_one(text, pos, c);
    MIXSEQ_CHECK(length != 0, "malformed UTF-8 at byte ", pos);
    chars.push_back(text.substr(pos, length));
    pos += length;
  }
  return chars;
}

size_t utf8_length(std::string_view text) {
  size_t count = 0;
  for (unsigned char byte : text) count += (byte & 0xC0) != 0x80;
  return count;
}

bool is_unicode_whitespace(char32_t c) {
  // CPython's _PyUnicode_IsWhitespace: bidirectional class WS, B or S, or category Zs.
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D:
    case 0x1C: case 0x1D: case 0x1E: case 0x1F: case 0x20:
    case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

namespace {

// Length of the whitespace character at text[pos], or 0 when there is none.
size_t whitespace_length_at(std::string_view text, size_t pos) {
  const unsigned char lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) return is_unicode_whitespace(lead) ? 1 : 0;
  char32_t c;
  const size_t length = decode_one(text, pos, c);
  return length != 0 && is_unicode_whitespace(c) ? length : 0;
}

// Byte length of the (possibly malformed) character starting at text[pos].
size_t char_length_at(std::string_view text, size_t pos) {
  char32_t c;
  const size_t length = decode_one(text, pos, c);
  return length == 0 ? 1 : length;
}

}  // namespace

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size()) {
      const size_t ws = whitespace_length_at(text, pos);
      if (ws == 0) break;
      pos += ws;
    }
    const size_t start = pos;
    while (pos < text.size() && whitespace_length_at(text, pos) == 0) pos += char_length_at(text, pos);
    if (pos > start) fields.push_back(text.substr(start, pos - start));
  }
  return fields;
}

std::vector<std::string_view> split_on_space(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (size_t pos; (pos = text.find(' ', start)) != std::string_view::npos; start = pos + 1)
    fields.push_back(text.substr(start, pos - start));
  fields.push_back(text.substr(start));
  return fields;
}

std::string_view rstrip_whitespace(std::string_view text) {
  // Walk forwards so that multi-byte whitespace at the end is found too.
  size_t end = 0, pos = 0;
  while (pos < text.size()) {
    const size_t ws = whitespace_length_at(text, pos);
    if (ws == 0) {
      pos += char_length_at(text, pos);
      end = pos;
    } else {
      pos += ws;
    }
  }
  return text.substr(0, end);
}

std::string_view strip_whitespace(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t ws = whitespace_length_at(text, begin);
    if (ws == 0) break;
    begin += ws;
  }
  return rstrip_whitespace(text.substr(begin));
}

namespace {

// Byte length of the line boundary at text[pos] (see split_python_lines), or 0 when there is none.
size_t python_line_boundary_length(std::string_view text, size_t pos) {
  const unsigned char lead = static_cast<unsigned char>(text[pos]);
  switch (lead) {
    case '\r':
      return pos + 1 < text.size() && text[pos + 1] == '\n' ? 2 : 1;
    case '\n': case 0x0B: case 0x0C: case 0x1C: case 0x1D: case 0x1E:
      return 1;
    case 0xC2:  // U+0085 NEXT LINE
      return pos + 1 < text.size() && static_cast<unsigned char>(text[pos + 1]) == 0x85 ? 2 : 0;
    case 0xE2:  // U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR
      return text.compare(pos, 3, "\xE2\x80\xA8") == 0 || text.compare(pos, 3, "\xE2\x80\xA9") == 0 ? 3 : 0;
    default:
      return 0;
  }
}

}  // namespace

std::vector<std::string_view> split_python_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t boundary = python_line_boundary_length(text, pos);
    if (boundary == 0) {
      ++pos;
      continue;
    }
    pos += boundary;
    lines.push_back(text.substr(start, pos - start));
    start = pos;
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

}  // namespace mixseq
