// sacreBLEU's tokenizers (text/sacrebleu_tokenizer.h): the input is one line. Malformed UTF-8
// gets mixseq::Error from 13a, intl and char, which give valid UTF-8; 13a and intl give tokens
// separated by single spaces.
#include <string>

#include "fuzz_support.h"
#include "mixseq/text/sacrebleu_tokenizer.h"
#include "mixseq/util/utf8.h"

using namespace mixseq;
using fuzz::fuzz_check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line = fuzz::as_text(data, size);
  for (const auto tokenizer : {BleuTokenizer::k13a, BleuTokenizer::kIntl, BleuTokenizer::kChar, BleuTokenizer::kNone}) {
    fuzz::expect_clear_errors([&] {
      const std::string tokens = bleu_tokenize(line, tokenizer);
      if (tokenizer == BleuTokenizer::kNone) return;  // the line as given, checked by the reader
      fuzz_check(!find_invalid_utf8(tokens), "tokens are valid UTF-8");
      if (tokenizer == BleuTokenizer::kChar) return;  // " ".join(line): a space is a token of its own
      fuzz_check(tokens.find("  ") == std::string::npos, "tokens are separated by single spaces");
      fuzz_check(tokens.empty() || (tokens.front() != ' ' && tokens.back() != ' '), "no space at either end");
    });
  }
  fuzz::expect_clear_errors([&] { parse_bleu_tokenizer(line); });
  return 0;
}
