// UTF-8 helpers. mixseq keeps text as UTF-8 bytes in std::string; these functions look at it
// as Unicode code points where the tools we match (subword-nmt, sacreBLEU, Python's str) do.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mixseq {

// Byte offset of the first malformed sequence (bad lead byte, truncated or overlong
// sequence, surrogate, code point above U+10FFFF), or nullopt when `text` is valid UTF-8.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// Decodes valid UTF-8 (check with find_invalid_utf8 first); throws mixseq::Error otherwise.
std::u32string decode_utf8(std::string_view text);
std::string encode_utf8(std::u32string_view code_points);
void append_utf8(char32_t code_point, std::string& out);

// The code points of valid UTF-8 text, each as a view into `text`.
std::vector<std::string_view> split_utf8_chars(std::string_view text);

// Number of code points in valid UTF-8 text.
size_t utf8_length(std::string_view text);

// True for the characters Python's str.isspace() accepts, so that split_whitespace
// behaves like Python's str.split() with no argument.
bool is_unicode_whitespace(char32_t c);

// Python's str.split(): splits on runs of Unicode whitespace, dropping empty fields.
std::vector<std::string_view> split_whitespace(std::string_view text);

// Python's str.split(' '): splits on single ASCII spaces, keeping empty fields.
std::vector<std::string_view> split_on_space(std::string_view text);

// Python's str.strip() with no argument (Unicode whitespace at both ends).
std::string_view strip_whitespace(std::string_view text);

// Python's str.rstrip() with no argument (Unicode whitespace at the end only).
std::string_view rstrip_whitespace(std::string_view text);

// Python's str.splitlines(keepends=True): splits after each line boundary (\n, \r, \r\n, \v, \f,
// \x1c, \x1d, \x1e, U+0085, U+2028, U+2029), keeping it; no empty field at the end. This is how
// Python's codecs readers (subword-nmt's codecs.open) cut a file into lines.
std::vector<std::string_view> split_python_lines(std::string_view text);

}  // namespace mixseq
