// sacreBLEU's BLEU tokenizers (Post 2018), reimplemented to give the same tokens:
//   13a   mteval-v13a.pl, the WMT standard and sacreBLEU's default: unescapes &quot; &amp; &lt; &gt;,
//         drops "<skipped>", joins "-\n" line breaks, then splits off ASCII punctuation and symbols,
//         keeping "." and "," between digits (1,000.5) and splitting "-" after a digit (10-20);
//   intl  mteval-v14.pl --international-tokenization: splits off Unicode punctuation (\p{P}) unless
//         it sits between digits, and every Unicode symbol (\p{S});
//   char  every character is a token (for languages written without spaces);
//   none  the text as given.
// Each returns the tokens joined by single spaces, as sacreBLEU's tokenizers do. Text is valid
// UTF-8 (malformed input throws mixseq::Error). All functions are pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace mixseq {

enum class BleuTokenizer { k13a, kIntl, kChar, kNone };

// The sacreBLEU name ("13a", "intl", "char", "none"), as written in --tokenize and the signature.
std::string_view bleu_tokenizer_name(BleuTokenizer tokenizer);

// The tokenizer with that name; throws mixseq::Error listing the known names otherwise.
BleuTokenizer parse_bleu_tokenizer(std::string_view name);

std::string tokenize_13a(std::string_view line);
std::string tokenize_intl(std::string_view line);
std::string tokenize_char(std::string_view line);

// Applies the chosen tokenizer ("none" returns `line` unchanged).
std::string bleu_tokenize(std::string_view line, BleuTokenizer tokenizer);

}  // namespace mixseq
