// Lowercasing as Python's str.lower() does it, which is what sacreBLEU's -lc applies to
// hypotheses and references. Full Unicode case mapping through ICU's root locale: one code point
// may become several ("İ" -> "i̇"), and Σ becomes ς at the end of a word (Final_Sigma), as in
// CPython. ICU's Unicode version may differ from the Python that runs sacreBLEU
// (docs/scoring.md). Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace mixseq {

// Lowercases valid UTF-8 text; throws mixseq::Error on malformed UTF-8.
std::string lowercase(std::string_view text);

}  // namespace mixseq
