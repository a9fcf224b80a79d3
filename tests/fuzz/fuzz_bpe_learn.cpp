// Learning BPE and applying what was learnt (text/bpe_learner.h, bpe_codes.h, bpe_applier.h).
// Input: "<options byte><training text>\n%%\n<text to segment>". The codes learnt must save and load
// back unchanged, and segmenting with them must only cut words: the pieces, separators removed,
// spell the word again.
#include <string>

#include "fuzz_support.h"
#include "mixseq/text/bpe_applier.h"
#include "mixseq/text/bpe_learner.h"
#include "mixseq/util/utf8.h"

using namespace mixseq;
using fuzz::fuzz_check;

namespace {

void check_segmentation(const BpeApplier& applier, std::string_view text) {
  for (const auto line : split_python_lines(text)) {
    applier.process_line(line);
    for (const auto word : split_on_space(line)) {
      if (word.empty() || find_invalid_utf8(word)) continue;
      std::string spelled;
      const auto pieces = applier.segment_word(word);
      for (size_t i = 0; i < pieces.size(); ++i) {
        const std::string& piece = pieces[i];
        const bool last = i + 1 == pieces.size();
        fuzz_check(last || piece.size() > 2, "a piece before the last ends with the separator");
        spelled += last ? piece : piece.substr(0, piece.size() - 2);
      }
      fuzz_check(spelled == word, "the pieces of a word spell the word");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  const auto parts = fuzz::split_parts(fuzz::as_text(data + 1, size - 1), 2);
  fuzz::expect_clear_errors([&] {
    WordCounts words;
    for (const auto line : split_python_lines(parts[0])) words.add_words_of_line(line);
    BpeLearnOptions options;
    options.symbols = flags % 64;
    options.min_frequency = (flags >> 6) % 3;
    options.total_symbols = flags & 32;
    const BpeCodes codes = learn_bpe(words, options);
    fuzz_check(static_cast<int64_t>(codes.merges().size()) <= options.symbols, "no more merges than asked for");

    const std::string path = fuzz::scratch_dir() + "/codes";
    codes.save(path);
    const BpeCodes loaded = BpeCodes::load(path);
    fuzz_check(loaded.merges().size() == codes.merges().size(), "the codes file keeps every merge");
    for (size_t i = 0; i < codes.merges().size(); ++i)
      fuzz_check(loaded.merges()[i].left == codes.merges()[i].left && loaded.merges()[i].right == codes.merges()[i].right,
                 "the codes file keeps each merge as learnt");

    BpeApplyOptions apply;
    apply.threads = 1;
    const BpeApplier applier(codes, apply);
    check_segmentation(applier, parts[0]);
    if (parts.size() > 1) check_segmentation(applier, parts[1]);
  });
  return 0;
}
