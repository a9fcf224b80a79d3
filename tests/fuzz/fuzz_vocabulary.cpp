// Vocabulary files (text/vocabulary.h) and subword-nmt's "<word> <count>" files
// (text/word_counts.h), read from a file holding the input. Bad files get mixseq::Error; a
// vocabulary that loads saves and loads back equal, and encodes its own tokens to their ids.
#include <string>

#include "fuzz_support.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/text/word_counts.h"

using namespace mixseq;
using fuzz::fuzz_check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch_file("vocab.txt", fuzz::as_text(data, size));
  fuzz::expect_clear_errors([&] {
    const Vocabulary vocabulary = Vocabulary::load(path);
    fuzz_check(vocabulary.size() >= kSpecialSymbolCount, "a vocabulary has the special symbols");
    for (int64_t id = 0; id < vocabulary.size(); ++id)
      fuzz_check(vocabulary.id(vocabulary.token(id)) == id, "each token maps back to its id");
    const std::string copy = fuzz::scratch_dir() + "/copy.txt";
    vocabulary.save(copy);
    fuzz_check(Vocabulary::load(copy) == vocabulary, "a saved vocabulary loads back equal");
    std::vector<int64_t> ids;
    for (int64_t id = 0; id < vocabulary.size(); ++id) ids.push_back(id);
    vocabulary.decode(ids);
  });
  fuzz::expect_clear_errors([&] {
    const TokenCounts counts = count_tokens({path});
    measure_coverage(Vocabulary::build(counts), counts);
  });
  fuzz::expect_clear_errors([&] { WordCounts::load(path); });
  fuzz::expect_clear_errors([&] { count_words({path}); });
  return 0;
}
