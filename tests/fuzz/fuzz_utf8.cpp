// UTF-8 handling (util/utf8.h, text/lowercase.h): the input as text. Malformed text must be found
// by find_invalid_utf8 and refused by decode_utf8; valid text must survive each split and the
// decode/encode round trip byte for byte.
#include <string>

#include "fuzz_support.h"
#include "mixseq/text/lowercase.h"
#include "mixseq/util/utf8.h"

using namespace mixseq;
using fuzz::fuzz_check;

namespace {

template <typename Pieces>
std::string joined(const Pieces& pieces) {
  std::string text;
  for (const auto& piece : pieces) text += piece;
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  const auto invalid_at = find_invalid_utf8(text);
  if (invalid_at) {
    fuzz_check(*invalid_at < text.size(), "find_invalid_utf8 points inside the text");
    fuzz_check(!find_invalid_utf8(text.substr(0, *invalid_at)), "the prefix before the bad byte is valid");
    bool refused = false;
    try {
      decode_utf8(text);
    } catch (const Error&) {
      refused = true;
    }
    fuzz_check(refused, "decode_utf8 refuses malformed UTF-8");
    return 0;
  }
  const std::u32string code_points = decode_utf8(text);
  fuzz_check(encode_utf8(code_points) == text, "encode_utf8(decode_utf8(x)) == x");
  fuzz_check(utf8_length(text) == code_points.size(), "utf8_length counts code points");
  const auto chars = split_utf8_chars(text);
  fuzz_check(chars.size() == code_points.size() && joined(chars) == text, "split_utf8_chars covers the text");
  fuzz_check(joined(split_python_lines(text)) == text, "split_python_lines keeps every byte");
  for (const auto word : split_whitespace(text)) fuzz_check(!word.empty(), "split_whitespace drops empty fields");
  const auto stripped = strip_whitespace(text);
  fuzz_check(text.find(stripped) != std::string_view::npos, "strip_whitespace returns a part of the text");
  fuzz_check(rstrip_whitespace(text).size() >= stripped.size(), "rstrip keeps at least what strip keeps");
  std::string spaced;
  for (const auto field : split_on_space(text)) spaced += std::string(field) + " ";
  fuzz_check(spaced.size() == text.size() + 1, "split_on_space keeps every byte but the spaces");
  fuzz_check(!find_invalid_utf8(lowercase(text)), "lowercase gives valid UTF-8");
  return 0;
}
