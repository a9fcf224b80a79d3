#include "mixseq/text/lowercase.h"

#include <unicode/locid.h>
#include <unicode/unistr.h>

#include "mixseq/util/utf8.h"
#include "mixseq/util/error.h"

namespace mixseq {

std::string lowercase(std::string_view text) {
  const auto bad = find_invalid_utf8(text);
  MIXSEQ_CHECK(!bad, "lowercase: malformed UTF-8 at byte ", *bad);
  // The root locale applies only the language-independent rules, as Python does: Turkish
  // dotless i and Lithuanian accents stay out, Final_Sigma stays in.
  icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), text.size()));
  std::string out;
  unicode.toLower(icu::Locale::getRoot()).toUTF8String(out);
  return out;
}

}  // namespace mixseq
